"""The only module that imports the Anthropic and OpenAI SDKs.

Each adapter turns provider-neutral messages into the SDK's request, maps the SDK's
errors onto ours, and reads text and token usage from the reply. The key, base URL and HTTP
client always come from the `Endpoint`: the SDKs are given every credential explicitly, so they
never fall back to the server's ANTHROPIC_API_KEY / OPENAI_API_KEY. Errors name the endpoint's
URL and keep the provider's words, with the key redacted, and are raised without the SDK's
exception chained, so a logged traceback carries nothing the provider echoed.
"""

from __future__ import annotations

from typing import Any

import anthropic
import openai
from django.views.decorators.debug import sensitive_variables

from benchmark.llm.base import (
    Completion,
    ConfigurationError,
    ContextOverflowError,
    Endpoint,
    LLMError,
    ProviderError,
)
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


@sensitive_variables("key")  # an error report with local variables (DEBUG, mail_admins) shows no key
def anthropic_complete(
    *,
    endpoint: Endpoint,
    name: str,
    system: str,
    messages: list[dict[str, Any]],
    temperature: float | None,
    top_p: float | None,
    max_tokens: int,
    timeout: float,
    max_retries: int,
) -> Completion:
    key = endpoint.api_key.reveal()
    if not key:
        raise ConfigurationError(f"the endpoint {endpoint.name!r} has no API key for anthropic ({endpoint.url})")
    with http_client(timeout, endpoint=endpoint) as http:
        client = anthropic.Anthropic(
            api_key=key, base_url=endpoint.base_url, timeout=timeout, max_retries=max_retries, http_client=http
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
        except anthropic.APIError as exc:
            raise _error(endpoint, exc, overflow=isinstance(exc, anthropic.RequestTooLargeError)) from None
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


@sensitive_variables("key")
def openai_complete(
    *,
    endpoint: Endpoint,
    name: str,
    system: str,
    messages: list[dict[str, Any]],
    temperature: float | None,
    top_p: float | None,
    max_tokens: int,
    timeout: float,
    max_retries: int,
) -> Completion:
    provider = endpoint.provider
    key = endpoint.api_key.reveal()
    if provider == "openai" and not key:
        raise ConfigurationError(f"the endpoint {endpoint.name!r} has no API key for openai ({endpoint.url})")
    if provider == "compat" and not endpoint.base_url:
        raise ConfigurationError(f"the OpenAI-compatible endpoint {endpoint.name!r} has no base URL")
    with http_client(timeout, endpoint=endpoint) as http:
        # Local servers (vLLM, Ollama, llama.cpp) accept any key; the SDK insists on one. Organization
        # and project are given (empty) so the SDK does not read the server's OPENAI_ORG_ID.
        client = openai.OpenAI(
            api_key=key or "not-needed",
            organization=None if endpoint.guard is None else "",
            project=None if endpoint.guard is None else "",
            base_url=endpoint.base_url,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http,
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
        except openai.APIError as exc:
            code = getattr(exc, "code", None) or ""
            raise _error(endpoint, exc, overflow=code == "context_length_exceeded") from None
    if not reply.choices:
        raise ProviderError(
            f"{provider} at {endpoint.url} returned no choices", raw=endpoint.api_key.redact(reply.model_dump_json())
        )
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


def _error(endpoint: Endpoint, exc: Exception, *, overflow: bool = False) -> LLMError:
    """Our error for an SDK error: the URL, the status, the provider's words; the key redacted."""
    redact = endpoint.api_key.redact
    status = getattr(exc, "status_code", None)
    body = redact(_body(exc))
    where = f"{endpoint.provider} at {endpoint.url}"
    message = redact(str(exc))
    if status is None:
        # A connection error: the SDK says "Connection error."; the reason is in the chained cause.
        cause = exc.__cause__ or exc.__context__
        reason = redact(str(cause)) if cause is not None and str(cause) else ""
        detail = f"{message} {reason}".strip() if reason and reason not in message else message
        return ProviderError(f"{where}: could not connect: {detail}", raw=f"could not connect: {detail}")
    if overflow or (status in (400, 413) and _looks_like_overflow(message)):
        return ContextOverflowError(f"{where}: {message}", raw=body, status=status)
    if status in (401, 403):
        return ConfigurationError(f"{where} refused the API key (HTTP {status}): {message}", raw=body, status=status)
    if status == 400:
        return ProviderError(f"{where} rejected the request (HTTP 400): {message}", raw=body, status=status)
    return ProviderError(f"{where}: call failed (HTTP {status}): {message}", raw=body, status=status)


def _body(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    try:
        return response.text if response is not None else str(exc)
    except Exception:
        return str(exc)
