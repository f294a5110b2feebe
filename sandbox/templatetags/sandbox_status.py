"""`{% sandbox_status %}`: which sandbox backend isolates the agents here, how well, and why it was chosen."""

from __future__ import annotations

from typing import Any

from django import template
from django.conf import settings

register = template.Library()


@register.inclusion_tag("sandbox/_status.html")
def sandbox_status() -> dict[str, Any]:
    from sandbox import backend_info
    from sandbox.provision import remembered

    info = backend_info()
    chosen = remembered(settings.VAR_DIR)
    if chosen and chosen.get("backend") != info.get("backend"):
        chosen = None  # an explicit SANDBOX_BACKEND since: the recorded reason is not about this backend
    return {"info": info, "chosen": chosen, "weaker": info.get("backend") in ("bwrap", "local")}
