"""Fake LLM providers at the HTTP transport: the real Anthropic/OpenAI SDK code runs.

Use the `fake_llm` fixture: queue replies in the order the code under test will ask
for them, then inspect `fake_llm.calls` (the decoded JSON bodies and URLs).

    fake_llm.anthropic("DISCUSSION ...\n```\nls\n```", tokens_in=1000, tokens_out=50)
    fake_llm.openai("{...}")
    fake_llm.error(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})

Endpoint checks (benchmark.llm.check: the launch forms, the worker before a sandbox opens, the
endpoint page's Test button) are told apart by their prompt. They are answered "ok" unless a
check reply is queued (`check_error`, `check_refused`), and recorded in `fake_llm.checks`, not in
`calls`, so a test counts the agent's own calls.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

import httpx2

from benchmark.llm.check import CHECK_PROMPT
from benchmark.llm.transport import Request, Response

REFUSED = object()


def anthropic_body(
    text: str, tokens_in: int = 100, tokens_out: int = 20, model: str = "claude-sonnet-4-5", stop: str = "end_turn"
) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
    }


def openai_body(
    text: str, tokens_in: int = 100, tokens_out: int = 20, model: str = "gpt-4o", stop: str = "stop"
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": stop}],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out, "total_tokens": tokens_in + tokens_out},
    }


def is_check(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    return bool(messages) and messages[-1].get("content") == CHECK_PROMPT


def ok_body(request: Request, text: str = "ok", tokens_in: int = 12, tokens_out: int = 1) -> dict[str, Any]:
    """The reply shape of whichever API `request` went to."""
    if request.url.path.endswith("/messages"):
        return anthropic_body(text, tokens_in, tokens_out)
    return openai_body(text, tokens_in, tokens_out)


class FakeLLM:
    def __init__(self) -> None:
        self.replies: deque[tuple[int, dict[str, Any]]] = deque()
        self.check_replies: deque[Any] = deque()
        self.calls: list[dict[str, Any]] = []
        self.checks: list[dict[str, Any]] = []

    def anthropic(self, text: str, tokens_in: int = 100, tokens_out: int = 20, stop: str = "end_turn") -> FakeLLM:
        """`stop="max_tokens"` is how Anthropic reports a reply cut at the token limit."""
        self.replies.append((200, anthropic_body(text, tokens_in, tokens_out, stop=stop)))
        return self

    def openai(self, text: str, tokens_in: int = 100, tokens_out: int = 20, stop: str = "stop") -> FakeLLM:
        """`stop="length"` is how OpenAI (and compatible servers) report a reply cut at the token limit."""
        self.replies.append((200, openai_body(text, tokens_in, tokens_out, stop=stop)))
        return self

    def error(self, status: int, body: dict[str, Any]) -> FakeLLM:
        self.replies.append((status, body))
        return self

    def check_error(self, status: int, body: dict[str, Any]) -> FakeLLM:
        """The next endpoint check is answered with this HTTP error."""
        self.check_replies.append((status, body))
        return self

    def check_refused(self) -> FakeLLM:
        """The next endpoint check finds nobody listening (the connection is refused)."""
        self.check_replies.append(REFUSED)
        return self

    def __call__(self, request: Request) -> Response:
        body = json.loads(request.content or b"{}")
        record = {"url": str(request.url), "body": body, "headers": dict(request.headers)}
        if is_check(body):
            self.checks.append(record)
            if not self.check_replies:
                return Response(200, json=ok_body(request))
            reply = self.check_replies.popleft()
            if reply is REFUSED:
                raise httpx2.ConnectError("[Errno 111] Connection refused", request=request)
            status, payload = reply
            return Response(status, json=payload)
        self.calls.append(record)
        if not self.replies:
            return Response(500, json={"error": {"message": "the test queued no more fake replies"}})
        status, payload = self.replies.popleft()
        return Response(status, json=payload)
