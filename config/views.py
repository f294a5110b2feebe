from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from accounts.roles import ADMIN, is_admin, is_researcher, is_reviewer, role_required
from config.health import health_report
from config.overview import overview_numbers


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Each role lands on its own page: admins on the overview, researchers on an overview of their
    work, reviewers on their queue."""
    user = request.user
    if is_admin(user):
        return render(request, "accounts/admin_home.html", {"numbers": overview_numbers()})
    if is_researcher(user):
        from benchmark.runs.home import researcher_overview

        return render(request, "benchmark/researcher_home.html", {"overview": researcher_overview(user)})
    if is_reviewer(user):
        return redirect("review:queue")
    return render(request, "accounts/no_role.html", status=403)


@never_cache
@require_GET
@role_required(ADMIN)
def overview_json(request: HttpRequest) -> JsonResponse:
    """The overview's live numbers (admins only, like the overview itself)."""
    return JsonResponse(overview_numbers())


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Up or down for anyone (load balancers, `make up`); the parts only for admins.

    The details name the Docker engine version, the sandbox image tag, worker counts and driver
    errors: a map for an attacker, so anonymous callers, researchers and reviewers get `ok` alone.
    """
    report = health_report()
    # Degraded (a part restarting under the supervisor) still serves: only "down" is a 503, and
    # to anyone but an admin a degraded platform is simply up.
    serving = report["status"] != "down"
    body = report if is_admin(request.user) else {"ok": serving}
    return JsonResponse(body, status=200 if serving else 503)
