"""Provider-neutral types of the LLM layer."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

PROVIDERS = ("anthropic", "openai", "compat")


class LLMError(Exception):
    """Any failure of a model call; `raw` keeps what the provider said."""

    def __init__(self, message: str, *, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class ConfigurationError(LLMError):
    """The model string, key or base URL is missing or malformed: retrying will not help."""


class ContextOverflowError(LLMError):
    """The prompt does not fit the model's context window."""


class ProviderError(LLMError):
    """The provider failed (after the SDK's own retries with backoff): network, 5xx, rate limit, auth."""


@dataclass(frozen=True)
class Prices:
    """USD per million tokens."""

    input_per_mtok: float = 0.0
    output_per_mtok: float = 0.0

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input_per_mtok + tokens_out * self.output_per_mtok) / 1_000_000


@dataclass
class Completion:
    text: str
    tokens_in: int
    tokens_out: int
    cost: float
    model: str
    stop_reason: str = ""
    priced: bool = True  # False when no price is known for the model: cost is then 0 and says so
    raw: dict[str, Any] = field(default_factory=dict)


def parse_model(model: str) -> tuple[str, str]:
    """'anthropic:claude-x' -> ('anthropic', 'claude-x'); raises ConfigurationError otherwise."""
    provider, sep, name = model.partition(":")
    if not sep or not name or provider not in PROVIDERS:
        raise ConfigurationError(
            f"model {model!r} must read provider:model with provider one of {', '.join(PROVIDERS)}"
        )
    return provider, name


def text_block(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def image_block(data: bytes, media_type: str = "image/png") -> dict[str, str]:
    """An image in a message's content list; each provider adapter converts it to its own shape."""
    return {"type": "image", "media_type": media_type, "data": base64.b64encode(data).decode("ascii")}
