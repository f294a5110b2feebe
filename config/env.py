"""Strict parsers for environment variables.

Every parser raises ImproperlyConfigured naming the variable, so a typo such as
DEBUG=maybe stops start-up with a message instead of silently meaning "false".
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}
# The names read from this process's environment: what a Slurm job of a run is given of it
# (benchmark.runs.slurm.job_environment), so that the node's settings are the launching process's.
READ: set[str] = set()


def _raw(name: str, environ: Mapping[str, str] | None) -> str | None:
    if environ is None:
        READ.add(name)
    env = os.environ if environ is None else environ
    value = env.get(name)
    return None if value is None else value.strip()


def env_bool(name: str, default: bool, environ: Mapping[str, str] | None = None) -> bool:
    value = _raw(name, environ)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean: use one of 1/0, true/false, yes/no, on/off")


def env_int(
    name: str,
    default: int,
    environ: Mapping[str, str] | None = None,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    value = _raw(name, environ)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} is below the minimum {minimum}")
    if maximum is not None and number > maximum:
        raise ImproperlyConfigured(f"{name}={number} is above the maximum {maximum}")
    return number


def env_float(
    name: str, default: float, environ: Mapping[str, str] | None = None, *, minimum: float | None = None
) -> float:
    value = _raw(name, environ)
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise ImproperlyConfigured(f"{name}={value!r} is not a finite number")
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} is below the minimum {minimum}")
    return number


def env_str(name: str, default: str, environ: Mapping[str, str] | None = None) -> str:
    value = _raw(name, environ)
    return default if value is None or value == "" else value


def env_list(name: str, default: list[str], environ: Mapping[str, str] | None = None) -> list[str]:
    value = _raw(name, environ)
    if value is None or value == "":
        return list(default)
    items = [item.strip() for item in value.split(",")]
    if any(not item for item in items):
        raise ImproperlyConfigured(f"{name}={value!r} has an empty item: separate values with single commas")
    return items


def env_json_object(name: str, default: dict[str, Any], environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A JSON object (e.g. a storage backend's options); anything else is a configuration error."""
    value = _raw(name, environ)
    if value is None or value == "":
        return dict(default)
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} is not valid JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise ImproperlyConfigured(f"{name} must be a JSON object, got {type(parsed).__name__}")
    return parsed


def env_choice(name: str, default: str, choices: tuple[str, ...], environ: Mapping[str, str] | None = None) -> str:
    value = env_str(name, default, environ)
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} is not one of: {', '.join(choices)}")
    return value


_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def env_url(
    name: str, default: str | None, environ: Mapping[str, str] | None = None, *, schemes: tuple[str, ...] = ()
) -> str | None:
    value = _raw(name, environ)
    if value is None or value == "":
        return default
    if not _URL.match(value):
        raise ImproperlyConfigured(f"{name}={value!r} is not a URL (expected scheme://...)")
    scheme = value.split("://", 1)[0].lower()
    if schemes and scheme not in schemes:
        raise ImproperlyConfigured(f"{name}={value!r} must use one of the schemes: {', '.join(schemes)}")
    return value


_SIZE = re.compile(r"^(\d+)([kmg]?)b?$", re.IGNORECASE)


def env_size_mb(name: str, default: int, environ: Mapping[str, str] | None = None) -> int:
    """Sizes such as 512m, 2g or 1024 (megabytes)."""
    value = _raw(name, environ)
    if value is None or value == "":
        return default
    match = _SIZE.match(value)
    if not match:
        raise ImproperlyConfigured(f"{name}={value!r} is not a size such as 512m or 2g")
    number, unit = int(match.group(1)), match.group(2).lower()
    megabytes = {"k": number // 1024, "": number, "m": number, "g": number * 1024}[unit]
    if megabytes <= 0:
        raise ImproperlyConfigured(f"{name}={value!r} must be at least 1m")
    return megabytes
