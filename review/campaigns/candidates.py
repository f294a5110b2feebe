"""Candidate items, searched and paged in the database for one stage: the new-campaign form and a
campaign page's "add items" picker show one page of them and the picker fetches the others
(`campaign_candidates`, `campaign_item_candidates`), so a page's weight does not grow with the
number of finished items and runs (issue 33: 5,064 checkboxes, 1.09 MB, for a stage that had 30).
On a campaign page the stage is the campaign's and its own items are left out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.core.paginator import Page, Paginator
from django.db.models import Q
from django.urls import reverse

from judge.models import Rubric
from review.campaigns.forms import artifact_label, candidate_artifacts, candidate_runs, run_label
from review.models import STAGE_CHOICES, TRAJECTORY, Campaign

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


def _rows(stage: str, q: str, campaign: Campaign | None = None) -> tuple[Any, Any]:
    if stage == TRAJECTORY:
        rows = candidate_runs()
        if q:
            rows = rows.filter(Q(task__slug__icontains=q) | Q(method__icontains=q) | Q(agent__name__icontains=q))
        label = run_label
    else:
        rows = candidate_artifacts(stage)
        if q:
            rows = rows.filter(Q(research_run__task__slug__icontains=q) | Q(research_run__backbone__icontains=q))
        label = artifact_label
    if campaign is not None:  # what the campaign holds already is not offered again
        rows = rows.exclude(campaign_items__campaign=campaign)
    return rows, label


@dataclass
class Candidates:
    stage: str
    field: str
    q: str
    page: Page
    rows: list[dict[str, Any]]
    chosen: list[dict[str, Any]]
    campaign: Campaign | None = None

    def link(self, number: int) -> str:
        """The page at another page of this search, for a browser without script (the picker fetches
        the same from the endpoint): the form page, or the campaign page (whose own `q` and `page`
        filter its open assignments, so its picker's are `items_q` and `items_page`)."""
        if self.campaign is not None:
            query = {"items_page": number, **({"items_q": self.q} if self.q else {})}
            url = reverse("review:campaign_detail", args=[self.campaign.code])
            return f"{url}?{urlencode(query)}#picker-items"
        query = {"stage": self.stage, "page": number, **({"q": self.q} if self.q else {})}
        return f"{reverse('review:campaign_create')}?{urlencode(query)}"

    @property
    def previous_link(self) -> str:
        return self.link(self.page.previous_page_number()) if self.page.has_previous() else ""

    @property
    def next_link(self) -> str:
        return self.link(self.page.next_page_number()) if self.page.has_next() else ""


def candidates_page(
    *, stage: str, q: str = "", page: Any = 1, chosen: list[str] | None = None, campaign: Campaign | None = None
) -> Candidates:
    """One page of a stage's candidates matching `q`, and the chosen ones (kept checked, listed apart
    when they are not on this page, so a re-shown form loses no pick). With a campaign: its stage's
    items not in it yet, posted as `artifacts` (the add-items contract, runs included)."""
    if campaign is not None:
        stage = campaign.stage
    rows, label = _rows(stage, q.strip(), campaign)
    picked = {str(pk) for pk in chosen or []}
    shown = Paginator(rows, PAGE_SIZE).get_page(page)
    on_page = [{"pk": o.pk, "label": label(o), "checked": str(o.pk) in picked} for o in shown.object_list]
    elsewhere = picked - {str(r["pk"]) for r in on_page}
    kept = _rows(stage, "", campaign)[0].filter(pk__in=[pk for pk in elsewhere if pk.isdigit()]) if elsewhere else []
    return Candidates(
        stage=stage,
        field="artifacts" if campaign is not None else field_for(stage),
        q=q.strip(),
        page=shown,
        rows=on_page,
        chosen=[{"pk": o.pk, "label": label(o), "checked": True} for o in kept],
        campaign=campaign,
    )
