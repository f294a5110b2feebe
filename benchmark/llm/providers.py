"""The only module that imports the Anthropic and OpenAI SDKs.

Each adapter turns provider-neutral messages into the SDK's request, maps the SDK's
errors onto ours, and reads text and token usage from the reply.
"""

from __future__ import annotations

from typing import Any

import anthropic
import openai

from benchmark.llm.base import Completion, ConfigurationError, ContextOverflowError, ProviderError
from benchmark.llm.transport import http_client

_OVERFLOW_HINTS = (
    "context length",
    "context_length",
    "prompt is too long",
    "too many tokens",
    "maximum context",
    "context window",
)


def _looks_like_overflow(message: str) -> bool:
    lowered = message.lower()
    return any(hint in lowered for hint in _OVERFLOW_HINTS)


def _anthropic_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    blocks = []
    for block in content:
        if block["type"] == "image":
            blocks.append(
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": block["media_type"], "data": block["data"]},
                }
            )
        else:
            blocks.append({"type": "text", "text": block["text"]})
    return blocks


def _openai_content(content: Any) -> Any:
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if block["type"] == "image":
            parts.append(
                {"type": "image_url", "image_url": {"url": f"data:{block['media_type']};base64,{block['data']}"}}
            )
        else:
            parts.append({"type": "text", "text": block["text"]})
    return parts


def anthropic_complete(
    *,
    name: str,
    api_key: str,
    base_url: str | None,
    system: str,
    messages: list[dict[str, Any]],
    temperature: float | None,
    top_p: float | None,
    max_tokens: int,
    timeout: float,
    max_retries: int,
) -> Completion:
    if not api_key:
        raise ConfigurationError("ANTHROPIC_API_KEY is not set")
    client = anthropic.Anthropic(
        api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries, http_client=http_client(timeout)
    )
    # Sampling settings travel in the body: the SDK no longer types them, the API still reads them.
    extra: dict[str, Any] = {}
    if temperature is not None:
        extra["temperature"] = temperature
    if top_p is not None and temperature is None:
        extra["top_p"] = top_p
    kwargs: dict[str, Any] = {
        "model": name,
        "max_tokens": max_tokens,
        "messages": [{"role": m["role"], "content": _anthropic_content(m["content"])} for m in messages],
    }
    if system:
        kwargs["system"] = system
    if extra:
        kwargs["extra_body"] = extra
    try:
        reply = client.messages.create(**kwargs)
    except (anthropic.BadRequestError, anthropic.RequestTooLargeError) as exc:
        if isinstance(exc, anthropic.RequestTooLargeError) or _looks_like_overflow(str(exc)):
            raise ContextOverflowError(str(exc), raw=_body(exc)) from exc
        raise ProviderError(f"anthropic rejected the request: {exc}", raw=_body(exc)) from exc
    except anthropic.AuthenticationError as exc:
        raise ConfigurationError(f"anthropic refused the API key: {exc}", raw=_body(exc)) from exc
    except anthropic.APIError as exc:
        raise ProviderError(f"anthropic call failed: {exc}", raw=_body(exc)) from exc
    text = "".join(getattr(block, "text", "") for block in reply.content if getattr(block, "type", "") == "text")
    usage = reply.usage
    return Completion(
        text=text,
        tokens_in=int(usage.input_tokens or 0),
        tokens_out=int(usage.output_tokens or 0),
        cost=0.0,
        model=f"anthropic:{name}",
        stop_reason=str(reply.stop_reason or ""),
        raw=reply.model_dump(mode="json"),
    )


def openai_complete(
    *,
    provider: str,
    name: str,
    api_key: str,
    base_url: str | None,
    system: str,
    messages: list[dict[str, Any]],
    temperature: float | None,
    top_p: float | None,
    max_tokens: int,
    timeout: float,
    max_retries: int,
) -> Completion:
    if provider == "openai" and not api_key:
        raise ConfigurationError("OPENAI_API_KEY is not set")
    if provider == "compat" and not base_url:
        raise ConfigurationError(
            "an OpenAI-compatible model needs a base URL (OPENAI_BASE_URL or the agent's base_url)"
        )
    # Local servers (vLLM, Ollama, llama.cpp) accept any key; the SDK insists on one.
    client = openai.OpenAI(
        api_key=api_key or "not-needed",
        base_url=base_url,
        timeout=timeout,
        max_retries=max_retries,
        http_client=http_client(timeout),
    )
    chat: list[dict[str, Any]] = []
    if system:
        chat.append({"role": "system", "content": system})
    chat += [{"role": m["role"], "content": _openai_content(m["content"])} for m in messages]
    kwargs: dict[str, Any] = {"model": name, "messages": chat}
    if provider == "openai":
        kwargs["max_completion_tokens"] = max_tokens
    else:
        kwargs["max_tokens"] = max_tokens
    if temperature is not None:
        kwargs["temperature"] = temperature
    if top_p is not None:
        kwargs["top_p"] = top_p
    try:
        reply = client.chat.completions.create(**kwargs)
    except openai.BadRequestError as exc:
        code = getattr(exc, "code", None) or ""
        if code == "context_length_exceeded" or _looks_like_overflow(str(exc)):
            raise ContextOverflowError(str(exc), raw=_body(exc)) from exc
        raise ProviderError(f"{provider} rejected the request: {exc}", raw=_body(exc)) from exc
    except openai.AuthenticationError as exc:
        raise ConfigurationError(f"{provider} refused the API key: {exc}", raw=_body(exc)) from exc
    except openai.APIError as exc:
        raise ProviderError(f"{provider} call failed: {exc}", raw=_body(exc)) from exc
    if not reply.choices:
        raise ProviderError(f"{provider} returned no choices", raw=reply.model_dump_json())
    choice = reply.choices[0]
    usage = reply.usage
    return Completion(
        text=choice.message.content or "",
        tokens_in=int(getattr(usage, "prompt_tokens", 0) or 0),
        tokens_out=int(getattr(usage, "completion_tokens", 0) or 0),
        cost=0.0,
        model=f"{provider}:{name}",
        stop_reason=str(choice.finish_reason or ""),
        raw=reply.model_dump(mode="json"),
    )


def _body(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    try:
        return response.text if response is not None else str(exc)
    except Exception:
        return str(exc)
