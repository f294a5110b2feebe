"""The three roles (Django groups) and the checks every view uses."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

ADMIN = "admin"
RESEARCHER = "researcher"
REVIEWER = "reviewer"
ROLES = (ADMIN, RESEARCHER, REVIEWER)


def _groups(user: Any) -> set[str]:
    """The user's group names, read once per request (the user object lives as long as the request)."""
    if not getattr(user, "is_authenticated", False):
        return set()
    cached = getattr(user, "_referee_groups", None)
    if cached is None:
        cached = set(user.groups.values_list("name", flat=True))
        user._referee_groups = cached
    return cached


def is_admin(user: Any) -> bool:
    return bool(getattr(user, "is_authenticated", False)) and (user.is_superuser or ADMIN in _groups(user))


def is_researcher(user: Any) -> bool:
    """Researchers launch and watch runs; admins can do everything a researcher can."""
    return is_admin(user) or RESEARCHER in _groups(user)


def is_reviewer(user: Any) -> bool:
    return REVIEWER in _groups(user)


_CHECKS = {ADMIN: is_admin, RESEARCHER: is_researcher, REVIEWER: is_reviewer}


def has_role(user: Any, *roles: str) -> bool:
    return any(_CHECKS[role](user) for role in roles)


def role_required(*roles: str) -> Callable:
    """Anonymous users go to the login page; signed-in users without the role get 403."""
    unknown = set(roles) - set(ROLES)
    if unknown:
        raise ValueError(f"unknown role(s): {unknown}")

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not has_role(request.user, *roles):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapped

    return decorator
