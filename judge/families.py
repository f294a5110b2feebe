"""Model families: which lab a judge model or an item's author system comes from (self-preference probes).

Read from the name alone (`anthropic:claude-3-7-sonnet`, the backbone label `claude`, the stepwise
model `gemini-2.5-pro-preview-03-25`); a name that matches no family is its own family, never
guessed into one.
"""

from __future__ import annotations

# (name prefix, family); checked on the model name without its provider, lower-cased.
_PREFIXES = (
    ("claude", "anthropic"),
    ("gemini", "google"),
    ("gemma", "google"),
    ("gpt", "openai"),
    ("chatgpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("deepseek", "deepseek"),
    ("mistral", "mistral"),
    ("ministral", "mistral"),
    ("mixtral", "mistral"),
    ("qwen", "alibaba"),
    ("llama", "meta"),
)
_PROVIDERS = {"anthropic": "anthropic", "google": "google", "openai": "openai"}


def family_of(name: str) -> str:
    """'anthropic:claude-3-7-sonnet' -> 'anthropic'; 'o4-mini' -> 'openai'; 'compat:llama-3' -> 'meta'."""
    provider, _, model = name.strip().lower().rpartition(":")
    for prefix, family in _PREFIXES:
        if model.startswith(prefix):
            return family
    return _PROVIDERS.get(provider) or model or "unknown"
