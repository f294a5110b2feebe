"""/judge/findings/: MLR-Bench's published findings recomputed from the imported release (judge/findings.py)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.roles import ADMIN, RESEARCHER, role_required
from judge.access import may_see_released_judgments
from judge.findings import findings_compute


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


@require_GET
@role_required(RESEARCHER, ADMIN)
def findings_page(request: HttpRequest) -> HttpResponse:
    if not may_see_released_judgments(request.user):
        raise PermissionDenied  # model identity next to judge scores: never for a reviewer
    return render(request, "judge/findings.html", {"f": findings_compute()})


@require_GET
@role_required(RESEARCHER, ADMIN)
def findings_json(request: HttpRequest) -> HttpResponse:
    if not may_see_released_judgments(request.user):
        raise PermissionDenied
    body = json.dumps({**findings_compute()}, default=_plain, indent=1)
    response = HttpResponse(body, content_type="application/json")
    response["Content-Disposition"] = 'attachment; filename="mlrbench-findings.json"'
    return response
