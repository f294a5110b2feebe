"""What makes a model endpoint row valid: a URL that parses (and, for a researcher's own
endpoint, resolves to no address the network guard refuses), a key source that sends no server
secret, and at least one model on offer."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from benchmark.llm import netguard

ENV_VAR_RE = re.compile(r"^[A-Z_][A-Z0-9_]{0,99}$")
MODEL_NAME_RE = re.compile(r"^[\w.\-/:@+]{1,200}$")
# The platform's own secrets: an admin's slip of the keyboard must not ship them to a model provider.
PLATFORM_SECRETS = frozenset(
    {"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "EMAIL_HOST_PASSWORD", "REFEREE_ADMIN_PASSWORD"}
)


# -- validation -----------------------------------------------------------------------------------
def endpoint_problems(endpoint: Any, *, networks: Callable[[], list[str]], resolve: bool = True) -> dict[str, str]:
    """Field -> what is wrong; empty when the endpoint may be saved.

    `resolve` runs the SSRF check of a personal endpoint's host now (the form's friendly error),
    against the ranges `networks()` allows; the wall itself is the check at every connect.
    Takes the row (benchmark.models.ModelEndpoint) without importing the models: they call this.
    """
    problems: dict[str, str] = {}
    personal = endpoint.is_personal
    if endpoint.base_url:
        try:
            netguard.url_parts(endpoint.base_url)
        except ValueError as exc:
            problems["base_url"] = str(exc)
        else:
            if personal and resolve:
                try:
                    netguard.url_check(endpoint.base_url, netguard.parse_networks(networks()))
                except netguard.BlockedAddress as exc:
                    problems["base_url"] = str(exc)
    elif endpoint.provider == "compat":
        problems["base_url"] = "an OpenAI-compatible endpoint needs the server's base URL, e.g. http://gpu-box:8000/v1"
    source = endpoint.key_source
    if source == "env":
        name = endpoint.key_env_var.strip()
        if personal:
            problems["key_source"] = "an endpoint supplied by a researcher cannot take a key from the server"
        elif not ENV_VAR_RE.match(name):
            problems["key_env_var"] = "name the environment variable, e.g. ANTHROPIC_API_KEY (A-Z, 0-9, _)"
        elif name in PLATFORM_SECRETS or name.startswith("DJANGO_"):
            problems["key_env_var"] = f"{name} holds one of Referee's own secrets, not a model provider's key"
    elif source == "stored" and not endpoint.has_stored_key:
        problems["api_key"] = "enter the key to store"
    if source != "env" and endpoint.key_env_var:
        endpoint.key_env_var = ""
    if not endpoint.offers and not endpoint.open_models:
        problems["offers"] = "list at least one model (or let researchers name any model)"
    for offer in endpoint.offers:
        if not isinstance(offer, dict) or not MODEL_NAME_RE.match(str(offer.get("model", ""))):
            problems["offers"] = f"{offer!r} is not a model offer"
            break
    return problems
