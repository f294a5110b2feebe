"""Provider-neutral types of the LLM layer: endpoints, secrets, completions, errors."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PROVIDERS = ("anthropic", "openai", "compat")
REDACTED = "[redacted key]"


class LLMError(Exception):
    """Any failure of a model call; `raw` keeps what the provider said, `status` its HTTP status."""

    def __init__(self, message: str, *, raw: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.raw = raw
        self.status = status


class ConfigurationError(LLMError):
    """The endpoint, model, key or base URL is missing or malformed: retrying will not help."""


class ContextOverflowError(LLMError):
    """The prompt does not fit the model's context window."""


class ProviderError(LLMError):
    """The provider failed (after the SDK's own retries with backoff): network, 5xx, rate limit, auth."""


class Secret:
    """An API key that does not print itself: repr, str, logs and tracebacks show a placeholder.

    `reveal()` is called in exactly one place, where the SDK client is built. Pickling is refused so
    a key never rides along in an RQ job's arguments or a cache entry.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str = "") -> None:
        self._value = value or ""

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __repr__(self) -> str:
        return "Secret(***)" if self._value else "Secret()"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("a Secret is never pickled")

    def redact(self, text: str) -> str:
        """`text` with every occurrence of the key replaced; a provider that echoes it leaks nothing."""
        if not text or not self._value or len(self._value) < 4:
            return text
        return text.replace(self._value, REDACTED)


@dataclass(frozen=True)
class Prices:
    """USD per million tokens."""

    input_per_mtok: float = 0.0
    output_per_mtok: float = 0.0

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input_per_mtok + tokens_out * self.output_per_mtok) / 1_000_000


@dataclass(frozen=True)
class Guard:
    """The network wall of an endpoint a researcher supplied.

    Every connection is checked at connect time against the resolved address (so DNS rebinding
    cannot move it), no proxy from the environment is used, and only allow-listed headers leave,
    with the endpoint's own key as the only credential. `allowed` holds the CIDR ranges an admin
    opened (e.g. a lab's inference cluster) on top of the public internet.
    """

    allowed: tuple[str, ...] = ()


PUBLIC_URLS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com/v1"}


def public_url(provider: str) -> str:
    """What an endpoint without a base URL calls, as a person reads it in an error message."""
    return PUBLIC_URLS.get(provider, "(no base URL)")


@dataclass(frozen=True)
class Endpoint:
    """Where one model call goes: provider, URL, key and prices. Built by benchmark.llm.endpoints.

    `base_url` None means the provider's public API. `guard` is set for researcher-supplied
    endpoints and None for those an admin registered.
    """

    provider: str
    name: str
    base_url: str | None = None
    api_key: Secret = field(default_factory=Secret)
    prices: Mapping[str, Prices] = field(default_factory=dict)
    guard: Guard | None = None

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise ConfigurationError(f"unknown provider {self.provider!r}; use one of {', '.join(PROVIDERS)}")
        if not isinstance(self.api_key, Secret):
            raise TypeError("Endpoint.api_key must be a Secret")

    @property
    def url(self) -> str:
        """The base URL as a person reads it in an error message."""
        if self.base_url:
            return self.base_url
        return public_url(self.provider)

    def price_of(self, model: str) -> Prices | None:
        return self.prices.get(model)


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


def bare_model(model: str) -> str:
    """The model name an endpoint serves: 'anthropic:claude-x' -> 'claude-x'; 'llama3:8b' stays as it is."""
    provider, sep, name = model.partition(":")
    return name if sep and provider in PROVIDERS else model


def text_block(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def image_block(data: bytes, media_type: str = "image/png") -> dict[str, str]:
    """An image in a message's content list; each provider adapter converts it to its own shape."""
    return {"type": "image", "media_type": media_type, "data": base64.b64encode(data).decode("ascii")}
