"""Model endpoints (benchmark.models.ModelEndpoint) as the provider layer sees them.

The one way from a stored endpoint to an `Endpoint` the provider layer can call is
`connection_for`; it decides which key goes with which URL:

- a shared endpoint (registered by an admin) carries its key: from the environment variable the
  admin named, or the stored encrypted one;
- a personal endpoint (supplied by a researcher, only while the admin allows it) carries only
  the key its owner stored, never one from the server's environment, and a network guard;
- a bare `provider:model` string (rows from before endpoints existed, the agent's literature
  tool) resolves to the admin's default endpoint of that provider. No string, form field or
  stored setting can pair a server key with a URL a caller chose.
"""

from __future__ import annotations

import os
from typing import Any

from django.db.models import Q, QuerySet

from benchmark.llm.base import ConfigurationError, Endpoint, Guard, Prices, Secret, bare_model, parse_model
from benchmark.llm.validation import ENV_VAR_RE, MODEL_NAME_RE, PLATFORM_SECRETS
from benchmark.models import EndpointPolicy, ModelEndpoint


# -- the list of models an endpoint offers ------------------------------------------------------
def offers_parse(text: str) -> list[dict[str, Any]]:
    """Lines of `model [input-price output-price]` (USD per million tokens) -> offers; ValueError names the line."""
    offers: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        parts = line.replace(",", " ").split()
        if not parts or parts[0].startswith("#"):
            continue
        name = parts[0]
        if not MODEL_NAME_RE.match(name):
            raise ValueError(f"line {number}: {name!r} is not a model name (letters, digits and . - _ / : @ +)")
        if name in seen:
            raise ValueError(f"line {number}: {name} is listed twice")
        if len(parts) not in (1, 3):
            raise ValueError(
                f"line {number}: write the model name alone (unpriced) or followed by two prices: "
                f"input and output USD per million tokens, e.g. '{name} 3 15'"
            )
        prices: list[float | None] = [None, None]
        for position, raw in enumerate(parts[1:]):
            try:
                value = float(raw)
            except ValueError:
                raise ValueError(f"line {number}: {raw!r} is not a price") from None
            if not 0 <= value < 10_000 or value != value:
                raise ValueError(f"line {number}: {raw} is not a price between 0 and 10000 USD per million tokens")
            prices[position] = value
        seen.add(name)
        offers.append({"model": name, "input_per_mtok": prices[0], "output_per_mtok": prices[1]})
    return offers


def offers_text(offers: list[dict[str, Any]]) -> str:
    def price(value: Any) -> str:
        return f"{value:g}" if isinstance(value, int | float) else ""

    lines = []
    for offer in offers:
        priced = offer.get("input_per_mtok") is not None and offer.get("output_per_mtok") is not None
        suffix = f" {price(offer['input_per_mtok'])} {price(offer['output_per_mtok'])}" if priced else ""
        lines.append(f"{offer['model']}{suffix}")
    return "\n".join(lines)


def endpoint_prices(endpoint: ModelEndpoint) -> dict[str, Prices]:
    prices = {}
    for offer in endpoint.offers:
        given, taken = offer.get("input_per_mtok"), offer.get("output_per_mtok")
        if isinstance(given, int | float) and isinstance(taken, int | float):
            prices[str(offer["model"])] = Prices(float(given), float(taken))
    return prices


# -- keys -----------------------------------------------------------------------------------------
def endpoint_secret(endpoint: ModelEndpoint) -> Secret:
    """The key to send with calls to `endpoint`; ConfigurationError (plain words) when there is none to use."""
    source = endpoint.key_source
    if source == ModelEndpoint.KeySource.NONE:
        return Secret("")
    if source == ModelEndpoint.KeySource.STORED:
        from benchmark.llm.keys import decrypt

        if not endpoint.has_stored_key:
            raise ConfigurationError(f"the endpoint {endpoint.name!r} has no stored key; enter one on its page")
        return decrypt(endpoint.key_ciphertext, context=str(endpoint.code), label=f"the endpoint {endpoint.name!r}")
    if endpoint.is_personal:  # refused on save too; checked again here, where the key would leave
        raise ConfigurationError(f"the endpoint {endpoint.name!r} was supplied by a researcher: no server key")
    name = endpoint.key_env_var.strip()
    if name in PLATFORM_SECRETS or not ENV_VAR_RE.match(name):
        raise ConfigurationError(f"the endpoint {endpoint.name!r} names {name!r}, which is not a key variable")
    value = os.environ.get(name, "")
    if not value:
        raise ConfigurationError(f"the key of the endpoint {endpoint.name!r} is not set on this server ({name})")
    return Secret(value)


def key_status(endpoint: ModelEndpoint) -> tuple[bool, str]:
    """(ready, words) about the key, for the endpoint pages: never the key or any part of it."""
    source = endpoint.key_source
    if source == ModelEndpoint.KeySource.NONE:
        return True, "none (no key is sent)"
    if source == ModelEndpoint.KeySource.ENV:
        if os.environ.get(endpoint.key_env_var.strip()):
            return True, f"from the environment variable {endpoint.key_env_var} (set)"
        return False, f"from the environment variable {endpoint.key_env_var}, which is not set on this server"
    if not endpoint.has_stored_key:
        return False, "no key stored yet"
    try:
        endpoint_secret(endpoint)
    except ConfigurationError as exc:
        return False, str(exc)
    saved = endpoint.key_saved_at.strftime("%Y-%m-%d %H:%M UTC") if endpoint.key_saved_at else "earlier"
    return True, f"stored encrypted, saved {saved}"


# -- who may use which endpoint -------------------------------------------------------------------
def personal_endpoints_allowed() -> bool:
    return EndpointPolicy.current().researcher_endpoints


def usable_endpoints(user: Any) -> QuerySet[ModelEndpoint]:
    """Enabled shared endpoints, and the user's own personal ones while the admin allows them."""
    mine = Q(scope=ModelEndpoint.Scope.PERSONAL, owner_id=getattr(user, "pk", None))
    wanted = Q(scope=ModelEndpoint.Scope.SHARED)
    if personal_endpoints_allowed() and getattr(user, "is_authenticated", False):
        wanted |= mine
    return ModelEndpoint.objects.filter(wanted, enabled=True).order_by("scope", "name")


def endpoint_unusable(endpoint: ModelEndpoint, user: Any) -> str | None:
    """Why `user` may not call `endpoint` now, or None."""
    if not endpoint.enabled:
        return f"the endpoint {endpoint.name!r} is disabled"
    if endpoint.is_personal:
        if not personal_endpoints_allowed():
            return f"the endpoint {endpoint.name!r} was supplied by a researcher, and an admin has turned those off"
        if user is None or endpoint.owner_id is None or endpoint.owner_id != getattr(user, "pk", None):
            return f"the endpoint {endpoint.name!r} belongs to another researcher"
    return None


def endpoint_default(provider: str) -> ModelEndpoint | None:
    """The admin's endpoint for a bare `provider:model` string: the seeded default, else the oldest shared one."""
    shared = ModelEndpoint.objects.filter(scope=ModelEndpoint.Scope.SHARED, provider=provider, enabled=True)
    return shared.filter(seed=provider).first() or shared.order_by("created_at", "pk").first()


def endpoint_connection(endpoint: ModelEndpoint) -> Endpoint:
    guard = None
    if endpoint.is_personal:
        guard = Guard(allowed=tuple(EndpointPolicy.current().networks()))
    return Endpoint(
        provider=endpoint.provider,
        name=endpoint.name,
        base_url=endpoint.base_url or None,
        api_key=endpoint_secret(endpoint),
        prices=endpoint_prices(endpoint),
        guard=guard,
    )


def connection_for(*, endpoint: ModelEndpoint | None, model: str, user: Any = None) -> tuple[Endpoint, str]:
    """(the Endpoint to call, the model name it serves) for `model` at `endpoint`, as `user`.

    With no endpoint, `model` must read provider:model and goes to the admin's default endpoint
    for that provider (any model name, as before endpoints existed). Raises ConfigurationError.
    """
    if endpoint is None:
        provider, name = parse_model(model)
        endpoint = endpoint_default(provider)
        if endpoint is None:
            raise ConfigurationError(
                f"no model endpoint serves {model}: an admin registers one on the Model endpoints page"
            )
    else:
        name = bare_model(model)
        if not endpoint.offers_model(name):
            offered = ", ".join(endpoint.model_names) or "nothing yet"
            raise ConfigurationError(f"the endpoint {endpoint.name!r} does not offer {name!r} (it offers {offered})")
    reason = endpoint_unusable(endpoint, user)
    if reason:
        raise ConfigurationError(reason)
    return endpoint_connection(endpoint), name
