"""The admin overview's numbers: what is going on now, read from the database, the job queues, the
review campaigns, the agreement cache and the sandbox backend.

Every number is counted when asked (nothing made up); the page shows them on load and
static/js/overview.js refreshes them from /overview.json while the page is open. Agreement verdicts
are the one exception to "counted when asked": an analysis bootstraps for seconds, so the overview
shows a campaign's verdicts only when its agreement page has computed them for the campaign's
current reviews and judgments (the cache is keyed by that state), and otherwise says they are not
computed yet. The overview is an admin's page: judge figures never reach a reviewer through it.
"""

from __future__ import annotations

from datetime import datetime, time
from typing import Any

from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone

from benchmark.models import ResearchRun, Run
from benchmark.runs.exits import exit_text

QUEUES = ("runs", "judge", "default")
RECENT = 8
CAMPAIGNS = 6  # open campaigns listed; the campaigns page has the rest


def _queued_jobs() -> dict[str, int | None]:
    """Jobs waiting per RQ queue; None for a queue Redis could not be asked about (shown as unknown)."""
    import django_rq

    counts: dict[str, int | None] = {}
    for name in QUEUES:
        try:
            counts[name] = django_rq.get_queue(name).count
        except Exception:  # Redis down: the page still serves and says the count is unknown
            counts[name] = None
    return counts


def _count(queryset: Any, group: str) -> Coalesce:
    """A correlated COUNT of `queryset` rows per campaign (`group` names the campaign column)."""
    counted = queryset.filter(**{group: OuterRef("pk")}).order_by().values(group).annotate(n=Count("id")).values("n")
    return Coalesce(Subquery(counted[:1]), 0)


def _campaigns() -> list[dict[str, Any]]:
    """Open campaigns, newest first, with reviews submitted of reviews expected (items x k)."""
    from review.models import Campaign, CampaignItem, Review

    submitted = Review.objects.filter(status=Review.Status.SUBMITTED)
    campaigns = (
        Campaign.objects.filter(status=Campaign.Status.OPEN)
        .annotate(
            n_items=_count(CampaignItem.objects.all(), "campaign"),
            n_submitted=_count(submitted, "assignment__campaign"),
        )
        .order_by("-created_at")[:CAMPAIGNS]
    )
    return [
        {
            "name": campaign.name,
            "url": reverse("review:campaign_detail", args=[campaign.code]),
            "reviews_submitted": campaign.n_submitted,
            "reviews_expected": campaign.n_items * campaign.reviewers_per_item,
            "deadline": campaign.deadline.isoformat() if campaign.deadline else None,
            "overdue": campaign.is_overdue,
        }
        for campaign in campaigns
    ]


def _verdicts() -> list[dict[str, Any]]:
    """Per campaign with reviews (newest first): its verdict counts under the default settings, when
    the agreement page computed them for the current state; else computed=False."""
    from agreement.report.forms import AgreementSettingsForm
    from agreement.report.selectors import cached_analysis
    from review.models import Campaign, Review

    reviewed = Review.objects.filter(status=Review.Status.SUBMITTED).values("assignment__campaign_id")
    out = []
    for campaign in (
        Campaign.objects.filter(pk__in=reviewed).select_related("rubric").order_by("-created_at")[:CAMPAIGNS]
    ):
        form = AgreementSettingsForm.from_query({}, campaign=campaign)
        analysis = (
            cached_analysis(campaign=campaign, rubric=campaign.rubric, settings=form.settings())
            if form.is_valid()
            else None
        )
        entry: dict[str, Any] = {
            "name": campaign.name,
            "url": reverse("agreement:campaign", args=[campaign.code]),
            "computed": analysis is not None,
            "verdicts": {},
        }
        if analysis is not None:
            counts: dict[str, int] = {}
            for cell in analysis.result["verdict"]["cells"]:
                counts[cell["verdict"]] = counts.get(cell["verdict"], 0) + 1
            entry["verdicts"] = counts
        out.append(entry)
    return out


def _sandbox() -> dict[str, Any]:
    """The sandbox backend; for Docker and Podman: engine usable, sandbox image present, running sandboxes.
    None where a figure could not be read (shown as unknown), never a guess."""
    from sandbox import backend_info, conf

    info = backend_info()
    health: dict[str, Any] = {
        "backend": info.get("backend"),
        "available": bool(info.get("available")),
        "detail": info.get("detail", ""),
        "engine": None,
        "image": None,
        "image_tag": None,
        "running": None,
    }
    if info.get("backend") not in ("docker", "podman"):
        return health
    from sandbox import docker as docker_backend
    from sandbox import podman

    engine = docker_backend if info["backend"] == "docker" else podman
    try:
        if engine is podman:  # no daemon: the engine "answers" when podman runs here (its probe)
            health["engine"] = podman.probe() is None
        else:
            health["engine"], _ = docker_backend.engine_available()
        if health["engine"]:
            health["image_tag"] = conf.image()
            health["image"] = engine.image_exists(health["image_tag"])
            health["running"] = sum(c["status"] == "running" for c in engine.sandbox_containers())
    except Exception as exc:  # the engine went away between calls: say so, keep serving
        health["detail"] = f"{health['detail']}; {exc}"
    return health


def overview_numbers() -> dict[str, Any]:
    today = timezone.make_aware(datetime.combine(timezone.localdate(), time.min))
    runs = Run.objects.all()
    # Runs made here only: an import stamps its released results as finished at import time, which
    # is not work done today; those are counted apart.
    here = runs.filter(source=Run.Source.REFEREE)
    finished_today = dict(here.filter(finished_at__gte=today).values_list("status").annotate(n=Count("id")).order_by())
    recent = (
        runs.filter(finished_at__isnull=False, source=Run.Source.REFEREE)
        .select_related("task", "agent")
        .order_by("-finished_at")[:RECENT]
    )
    return {
        "runs_running": runs.filter(status=Run.Status.RUNNING).count(),
        "runs_queued": runs.filter(status=Run.Status.QUEUED).count(),
        "research_running": ResearchRun.objects.filter(status=ResearchRun.Status.RUNNING).count(),
        "research_queued": ResearchRun.objects.filter(status=ResearchRun.Status.QUEUED).count(),
        "finished_today": {status: finished_today.get(status, 0) for status in ("finished", "failed", "cancelled")},
        "imported_today": runs.exclude(source=Run.Source.REFEREE).filter(created_at__gte=today).count(),
        "queued_jobs": _queued_jobs(),
        "campaigns": _campaigns(),
        "verdicts": _verdicts(),
        "sandbox": _sandbox(),
        "recent": [
            {
                "url": reverse("benchmark:run_detail", args=[run.code]),
                "task": run.task.slug,
                "method": run.method or run.agent.name,
                "status": run.status,
                "exit_status": exit_text(run.exit_status) if run.exit_status else "",
                "best_attempt": run.best_attempt,
                "finished_at": run.finished_at.isoformat(),
            }
            for run in recent
        ],
    }
