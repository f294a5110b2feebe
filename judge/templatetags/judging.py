"""`{% judgment_panel artifact %}`: the judgments of an artifact, for the pages of lower layers (research runs).

Renders nothing for anyone who may not see judge output (reviewers above all), so including it is safe.
"""

from __future__ import annotations

from typing import Any

from django import template

from judge.access import may_request_judgments, may_see_judgments
from judge.aggregate import judgment_panels

register = template.Library()


@register.inclusion_tag("judge/_panel.html", takes_context=True)
def judgment_panel(context: template.Context, artifact: Any) -> dict[str, Any]:
    request = context.get("request")
    user = getattr(request, "user", None) or context.get("user")
    if artifact is None or user is None or not may_see_judgments(user, artifact):
        return {"visible": False}
    return {
        "visible": True,
        "artifact": artifact,
        "panels": judgment_panels(artifact=artifact),
        "can_request": may_request_judgments(user, artifact),
    }


@register.filter
def flag_label(value: float | None) -> str:
    if value is None:
        return "-"
    return "yes" if value >= 1 else "no"
