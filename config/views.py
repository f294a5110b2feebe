from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from accounts.roles import is_admin, is_researcher, is_reviewer
from config.health import health_report


@require_GET
@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Each role lands on its own page: admins on the overview, researchers on runs, reviewers on their queue."""
    user = request.user
    if is_admin(user):
        return render(request, "accounts/admin_home.html")
    if is_researcher(user):
        return redirect("benchmark:run_list")
    if is_reviewer(user):
        return redirect("review:queue")
    return render(request, "accounts/no_role.html", status=403)


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    report = health_report()
    # Degraded (a part restarting under the supervisor) still serves: only "down" is a 503.
    return JsonResponse(report, status=503 if report["status"] == "down" else 200)
