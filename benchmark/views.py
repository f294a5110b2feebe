from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.roles import ADMIN, RESEARCHER, is_admin, role_required
from benchmark.models import Run


def visible_runs(user):
    """Admins see every run; a researcher sees their own runs, those shared with them, and imported public runs."""
    runs = Run.objects.select_related("task", "agent")
    if is_admin(user):
        return runs
    return runs.filter(Q(owner=user) | Q(shared_with=user) | Q(source=Run.Source.MLGYM)).distinct()


@require_GET
@role_required(RESEARCHER, ADMIN)
def run_list(request: HttpRequest) -> HttpResponse:
    runs = visible_runs(request.user)[:200]
    return render(request, "benchmark/run_list.html", {"runs": runs})
