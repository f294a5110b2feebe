"""Fake LLM providers at the HTTP transport: the real Anthropic/OpenAI SDK code runs.

Use the `fake_llm` fixture: queue replies in the order the code under test will ask
for them, then inspect `fake_llm.calls` (the decoded JSON bodies and URLs).

    fake_llm.anthropic("DISCUSSION ...\n```\nls\n```", tokens_in=1000, tokens_out=50)
    fake_llm.openai("{...}")
    fake_llm.error(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from benchmark.llm.transport import Request, Response


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


class FakeLLM:
    def __init__(self) -> None:
        self.replies: deque[tuple[int, dict[str, Any]]] = deque()
        self.calls: list[dict[str, Any]] = []

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

    def __call__(self, request: Request) -> Response:
        body = json.loads(request.content or b"{}")
        self.calls.append({"url": str(request.url), "body": body, "headers": dict(request.headers)})
        if not self.replies:
            return Response(500, json={"error": {"message": "the test queued no more fake replies"}})
        status, payload = self.replies.popleft()
        return Response(status, json=payload)
