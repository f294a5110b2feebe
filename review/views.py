from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.roles import ADMIN, REVIEWER, role_required


@require_GET
@role_required(REVIEWER)
def queue(request: HttpRequest) -> HttpResponse:
    return render(request, "review/queue.html", {"assignments": []})


@require_GET
@role_required(ADMIN)
def campaign_list(request: HttpRequest) -> HttpResponse:
    return render(request, "review/campaign_list.html", {"campaigns": []})
