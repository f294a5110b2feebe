"""`complete()`: send one call to an endpoint, price it, and say plainly what failed."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.conf import settings

from benchmark.llm.base import Completion, ConfigurationError, Endpoint, LLMError, Prices, bare_model


def complete(
    *,
    endpoint: Endpoint,
    model: str,
    system: str = "",
    messages: list[dict[str, Any]],
    temperature: float | None = 0.0,
    top_p: float | None = None,
    max_tokens: int = 4096,
    prices: Prices | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
) -> Completion:
    """One call of `model` (the name the endpoint serves, e.g. claude-sonnet-4-5) at `endpoint`.

    There is no base URL argument: where a call goes and which key it carries are the endpoint's,
    and endpoints come from benchmark.llm.endpoints. `prices` overrides the endpoint's price of
    the model; a model with neither is reported as unpriced. Raises ConfigurationError,
    ContextOverflowError or ProviderError (all LLMError).
    """
    if not isinstance(endpoint, Endpoint):
        raise ConfigurationError("a model call needs an endpoint (see benchmark.llm.endpoints)")
    if not messages:
        raise ConfigurationError("a model call needs at least one message")
    name = bare_model(model)
    if not name:
        raise ConfigurationError("a model call needs a model name")
    common = dict(
        endpoint=endpoint,
        name=name,
        system=system,
        messages=messages,
        temperature=temperature,
        top_p=top_p,
        max_tokens=max_tokens,
        timeout=settings.LLM_TIMEOUT if timeout is None else timeout,
        max_retries=settings.LLM_MAX_RETRIES if max_retries is None else max_retries,
    )
    # The SDKs weigh ~60 MB and seconds of start time: only a process that makes a call loads them
    # (issue 20; tests/test_import_footprint.py keeps the URL conf, workers and sweepers without them).
    from benchmark.llm import providers

    try:
        if endpoint.provider == "anthropic":
            completion = providers.anthropic_complete(**common)
        else:
            completion = providers.openai_complete(**common)
    except LLMError as exc:
        # Our own messages may quote a base URL or an SDK message; none may quote the key.
        redact = endpoint.api_key.redact
        raise type(exc)(redact(str(exc)), raw=redact(exc.raw), status=exc.status) from None
    completion = replace(completion, text=endpoint.api_key.redact(completion.text))
    price = prices if prices is not None else endpoint.price_of(name)
    if price is None:
        return replace(completion, cost=0.0, priced=False)
    return replace(completion, cost=price.cost(completion.tokens_in, completion.tokens_out), priced=True)
