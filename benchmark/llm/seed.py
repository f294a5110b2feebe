"""The default endpoints, seeded from the server's environment so that `make up` needs no extra step.

- "Anthropic": the key from ANTHROPIC_API_KEY, base URL ANTHROPIC_BASE_URL (else the public API);
- "OpenAI": the key from OPENAI_API_KEY, base URL OPENAI_BASE_URL (else the public API);
- "OpenAI-compatible server": only when OPENAI_BASE_URL is set; any model name may be asked for,
  with OPENAI_API_KEY when that is set (what `compat:` model strings did before endpoints).

The first two are created even when their key is not set yet: the key is read from the variable
at call time, so exporting it later and restarting is all it takes, and the endpoint page says
whether it is set. Seeding runs in the data migration that introduced endpoints and again on
every `seed_demo` (so `make up`); it creates a default only when no endpoint carries its seed tag,
and never edits one: after seeding, the endpoint is the admin's (disable it to stop using it; a
deleted default comes back on the next `make up` while its variable is set).

Written against a model class argument, so the migration can pass its historical model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmark.llm.prices import KNOWN

SEARCH_MODEL = "gpt-4o-search-preview"  # the literature stage's default (unpriced: OpenAI adds per-search fees)


def _offers(provider: str) -> list[dict[str, Any]]:
    offers = [
        {"model": key.split(":", 1)[1], "input_per_mtok": p.input_per_mtok, "output_per_mtok": p.output_per_mtok}
        for key, p in KNOWN.items()
        if key.startswith(f"{provider}:")
    ]
    if provider == "openai":
        offers.append({"model": SEARCH_MODEL, "input_per_mtok": None, "output_per_mtok": None})
    return offers


def default_specs(*, environ: Mapping[str, str], anthropic_base_url: str, openai_base_url: str) -> list[dict]:
    specs = [
        {
            "seed": "anthropic",
            "name": "Anthropic",
            "provider": "anthropic",
            "base_url": anthropic_base_url,
            "key_source": "env",
            "key_env_var": "ANTHROPIC_API_KEY",
            "offers": _offers("anthropic"),
            "open_models": False,
        },
        {
            "seed": "openai",
            "name": "OpenAI",
            "provider": "openai",
            "base_url": openai_base_url,
            "key_source": "env",
            "key_env_var": "OPENAI_API_KEY",
            "offers": _offers("openai"),
            "open_models": False,
        },
    ]
    if openai_base_url:
        with_key = bool(environ.get("OPENAI_API_KEY"))
        specs.append(
            {
                "seed": "compat",
                "name": "OpenAI-compatible server",
                "provider": "compat",
                "base_url": openai_base_url,
                "key_source": "env" if with_key else "none",
                "key_env_var": "OPENAI_API_KEY" if with_key else "",
                "offers": [],
                "open_models": True,
            }
        )
    return specs


def endpoints_seed(model: Any, *, environ: Mapping[str, str], anthropic_base_url: str, openai_base_url: str) -> list:
    """Create the missing defaults (see the module doc); returns the endpoints created."""
    created = []
    specs = default_specs(environ=environ, anthropic_base_url=anthropic_base_url, openai_base_url=openai_base_url)
    for spec in specs:
        if model.objects.filter(seed=spec["seed"]).exists():
            continue
        name = spec["name"]
        if model.objects.filter(scope="shared", name=name).exists():  # an admin already took the name
            name = f"{name} (from the environment)"
        created.append(model.objects.create(**{**spec, "name": name, "scope": "shared", "enabled": True}))
    return created


def endpoints_seed_from_settings() -> list:
    import os

    from django.conf import settings

    from benchmark.models import ModelEndpoint

    return endpoints_seed(
        ModelEndpoint,
        environ=os.environ,
        anthropic_base_url=settings.ANTHROPIC_BASE_URL or "",
        openai_base_url=settings.OPENAI_BASE_URL or "",
    )
