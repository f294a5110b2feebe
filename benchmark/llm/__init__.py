"""The provider layer: one `complete()` for Anthropic, OpenAI and any OpenAI-compatible server.

The agent, the research pipeline and the judge all call this; only `providers.py` imports the
SDKs. A call goes to an `Endpoint` (provider, base URL, key, prices) built from the admin's
model endpoints by `benchmark.llm.endpoints`; nothing here reads a server key by provider name.
Legacy model strings read `provider:model` (`anthropic:claude-sonnet-4-5`, `openai:gpt-4o`,
`compat:llama3`) and resolve to the admin's endpoint for that provider, never to a URL a caller
typed.
"""

from benchmark.llm.base import (
    Completion,
    ConfigurationError,
    ContextOverflowError,
    Endpoint,
    Guard,
    LLMError,
    Prices,
    ProviderError,
    Secret,
    image_block,
    parse_model,
    text_block,
)


def __getattr__(name: str):
    # `complete` lives with the provider SDKs (anthropic, openai: seconds of import time); loading it
    # on first use keeps every process that never calls a model (manage.py commands, the admin
    # autodiscovery that imports this package) from paying for them.
    if name == "complete":
        from benchmark.llm.client import complete

        return complete
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Completion",
    "ConfigurationError",
    "ContextOverflowError",
    "Endpoint",
    "Guard",
    "LLMError",
    "Prices",
    "ProviderError",
    "Secret",
    "complete",
    "image_block",
    "parse_model",
    "text_block",
]
