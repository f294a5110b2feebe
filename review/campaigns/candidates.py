"""The new-campaign form's candidate items, searched and paged in the database for one stage: the
form page shows one page of them and the picker fetches the others (`campaign_candidates`), so the
page's weight does not grow with the number of finished items and runs (issue 33: 5,064 checkboxes,
1.09 MB, for a stage that had 30)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.core.paginator import Page, Paginator
from django.db.models import Q
from django.urls import reverse

from judge.models import Rubric
from review.campaigns.forms import artifact_label, candidate_artifacts, candidate_runs, run_label
from review.models import STAGE_CHOICES, TRAJECTORY

PAGE_SIZE = 50
STAGES = {value for value, _ in STAGE_CHOICES}
# The rubric stage that judges a campaign stage (a paper is judged end to end); a stage missing here
# has no rubric of its kind and keeps whatever the admin picks.
RUBRIC_STAGE = {
    "idea": Rubric.Stage.IDEA,
    "proposal": Rubric.Stage.PROPOSAL,
    "experiment": Rubric.Stage.EXPERIMENT,
    "paper": Rubric.Stage.END_TO_END,
    TRAJECTORY: Rubric.Stage.TRAJECTORY,
}


def stage_rubric(stage: str) -> Rubric | None:
    """The rubric a campaign of this stage starts with: the stage's default version, else its latest."""
    rubric_stage = RUBRIC_STAGE.get(stage)
    if rubric_stage is None:
        return None
    return Rubric.objects.filter(stage=rubric_stage).order_by("-is_default", "-version", "-pk").first()


def stage_rubrics() -> dict[str, int]:
    """Campaign stage -> the pk of its starting rubric (the picker switches the rubric with the stage)."""
    return {stage: rubric.pk for stage in RUBRIC_STAGE if (rubric := stage_rubric(stage)) is not None}


def field_for(stage: str) -> str:
    """The form field a stage's picks are posted in: runs for trajectories, artifacts otherwise."""
    return "runs" if stage == TRAJECTORY else "artifacts"


def _rows(stage: str, q: str) -> tuple[Any, Any]:
    if stage == TRAJECTORY:
        rows = candidate_runs()
        if q:
            rows = rows.filter(Q(task__slug__icontains=q) | Q(method__icontains=q) | Q(agent__name__icontains=q))
        return rows, run_label
    rows = candidate_artifacts(stage)
    if q:
        rows = rows.filter(Q(research_run__task__slug__icontains=q) | Q(research_run__backbone__icontains=q))
    return rows, artifact_label


@dataclass
class Candidates:
    stage: str
    field: str
    q: str
    page: Page
    rows: list[dict[str, Any]]
    chosen: list[dict[str, Any]]

    def link(self, number: int) -> str:
        """The form page at another page of this search (the picker fetches the same from the endpoint)."""
        query = {"stage": self.stage, "page": number, **({"q": self.q} if self.q else {})}
        return f"{reverse('review:campaign_create')}?{urlencode(query)}"

    @property
    def previous_link(self) -> str:
        return self.link(self.page.previous_page_number()) if self.page.has_previous() else ""

    @property
    def next_link(self) -> str:
        return self.link(self.page.next_page_number()) if self.page.has_next() else ""


def candidates_page(*, stage: str, q: str = "", page: Any = 1, chosen: list[str] | None = None) -> Candidates:
    """One page of a stage's candidates matching `q`, and the chosen ones (kept checked, listed apart
    when they are not on this page, so a re-shown form loses no pick)."""
    rows, label = _rows(stage, q.strip())
    picked = {str(pk) for pk in chosen or []}
    shown = Paginator(rows, PAGE_SIZE).get_page(page)
    on_page = [{"pk": o.pk, "label": label(o), "checked": str(o.pk) in picked} for o in shown.object_list]
    elsewhere = picked - {str(r["pk"]) for r in on_page}
    kept = _rows(stage, "")[0].filter(pk__in=[pk for pk in elsewhere if pk.isdigit()]) if elsewhere else []
    return Candidates(
        stage=stage,
        field=field_for(stage),
        q=q.strip(),
        page=shown,
        rows=on_page,
        chosen=[{"pk": o.pk, "label": label(o), "checked": True} for o in kept],
    )
