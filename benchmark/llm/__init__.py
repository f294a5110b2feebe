"""The provider layer: one `complete()` for Anthropic, OpenAI and any OpenAI-compatible server.

The agent, the research pipeline and the judge all call this; only `providers.py`
imports the SDKs. Model strings read `provider:model`: `anthropic:claude-sonnet-4-5`,
`openai:gpt-4o`, or `compat:<model>` for an OpenAI-compatible server at `base_url`
(vLLM, Ollama, llama.cpp).
"""

from benchmark.llm.base import (
    Completion,
    ConfigurationError,
    ContextOverflowError,
    LLMError,
    Prices,
    ProviderError,
    image_block,
    parse_model,
    text_block,
)
from benchmark.llm.client import complete, provider_configured

__all__ = [
    "Completion",
    "ConfigurationError",
    "ContextOverflowError",
    "LLMError",
    "Prices",
    "ProviderError",
    "complete",
    "image_block",
    "parse_model",
    "provider_configured",
    "text_block",
]
