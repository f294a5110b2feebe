"""`complete()`: route a call to its provider, price it, and say plainly what failed."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django.conf import settings

from benchmark.llm import providers
from benchmark.llm.base import Completion, ConfigurationError, Prices, parse_model
from benchmark.llm.prices import prices_for


def provider_configured(model: str, base_url: str | None = None) -> bool:
    """True when a call to `model` could be made: key or base URL present."""
    try:
        provider, _ = parse_model(model)
    except ConfigurationError:
        return False
    if provider == "anthropic":
        return bool(settings.ANTHROPIC_API_KEY)
    if provider == "openai":
        return bool(settings.OPENAI_API_KEY)
    return bool(base_url or settings.OPENAI_BASE_URL)


def complete(
    *,
    model: str,
    system: str = "",
    messages: list[dict[str, Any]],
    temperature: float | None = 0.0,
    top_p: float | None = None,
    max_tokens: int = 4096,
    base_url: str | None = None,
    prices: Prices | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
) -> Completion:
    """One model call. Raises ConfigurationError, ContextOverflowError or ProviderError (all LLMError)."""
    if not messages:
        raise ConfigurationError("a model call needs at least one message")
    provider, name = parse_model(model)
    timeout = settings.LLM_TIMEOUT if timeout is None else timeout
    max_retries = settings.LLM_MAX_RETRIES if max_retries is None else max_retries
    common = dict(
        name=name,
        system=system,
        messages=messages,
        temperature=temperature,
        top_p=top_p,
        max_tokens=max_tokens,
        timeout=timeout,
        max_retries=max_retries,
    )
    if provider == "anthropic":
        completion = providers.anthropic_complete(
            api_key=settings.ANTHROPIC_API_KEY, base_url=base_url or settings.ANTHROPIC_BASE_URL, **common
        )
    elif provider == "openai":
        completion = providers.openai_complete(
            provider=provider, api_key=settings.OPENAI_API_KEY, base_url=base_url or settings.OPENAI_BASE_URL, **common
        )
    else:
        completion = providers.openai_complete(
            provider=provider, api_key=settings.OPENAI_API_KEY, base_url=base_url or settings.OPENAI_BASE_URL, **common
        )
    price = prices if prices is not None and (prices.input_per_mtok or prices.output_per_mtok) else prices_for(model)
    if price is None:
        return replace(completion, cost=0.0, priced=False)
    return replace(completion, cost=price.cost(completion.tokens_in, completion.tokens_out), priced=True)
