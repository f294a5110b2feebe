"""import_human_reviews on the released MLR-Bench study; CSV/JSON export; the demo seed."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from review.models import Assignment, Campaign, Review
from tests.review.factories import make_paper, make_rubric

pytestmark = pytest.mark.django_db

SHARED = Path("/work/shared/mlrbench")
for candidate in (
    Path(os.environ.get("MLRBENCH_DIR") or "/nonexistent"),
    Path(__file__).resolve().parents[2].parent / "shared" / "mlrbench",
    SHARED,
):
    if candidate.is_dir():
        SHARED = candidate
        break
HUMAN = SHARED / "human_eval" / "human_review.csv"
needs_data = pytest.mark.shared_data(HUMAN)


def _released_papers() -> None:
    """The 30 released papers, as the mlr importer stores them (task slug = workshop, backbone = model)."""
    with (SHARED / "human_eval" / "llm_judge.csv").open() as fh:
        for row in csv.DictReader(fh):
            make_paper(slug=row["workshop_name"], backbone=row["model_name"], figures={})
    make_rubric()


def _import(path: Path, name: str = "study") -> str:
    out = io.StringIO()
    call_command("import_human_reviews", str(path), "--campaign", name, stdout=out)
    return out.getvalue()


@needs_data
def test_it_imports_the_released_reviews_and_reports_the_known_faults() -> None:
    _released_papers()
    out = _import(HUMAN)
    campaign = Campaign.objects.get(name="study")
    assert Review.objects.filter(assignment__campaign=campaign, status="submitted", source="imported").count() == 57
    kinds = [f["kind"] for f in campaign.import_faults]
    assert kinds.count("duplicate_review") == 3 and kinds.count("missing_review") == 3
    assert "unmatched_row" not in kinds
    assert "duplicate_review: human_review.csv:" in out and "missing_review: iclr2025_" in out
    assert campaign.members.count() == len({r["reviewer_id"] for r in csv.DictReader(HUMAN.open())})
    # Per criterion, each human score per item with the item's system: what the agreement view reads.
    rows = list(Review.objects.submitted_in(campaign).score_rows())
    assert len(rows) == 57 * 5
    first = next(r for r in rows if r["system"] == "claude" and r["item"])
    assert set(first) >= {"item", "system", "reviewer", "criterion", "score"}


@needs_data
def test_it_is_idempotent() -> None:
    _released_papers()
    _import(HUMAN)
    out = _import(HUMAN)
    assert "0 reviews imported, 57 already present" in out
    assert Assignment.objects.count() == 57


def test_it_reports_bad_cells_unknown_papers_and_columns_without_dropping_the_rest(tmp_path) -> None:
    make_paper(slug="ws_a", backbone="claude", figures={})
    make_paper(slug="ws_b", backbone="gemini", figures={})
    make_rubric()
    path = tmp_path / "h.csv"
    path.write_text(
        "reviewer_id,model_name,workshop_name,Novelty,Clarity,Soundness,Significance,Overall,Vibes\n"
        "1,claude,ws_a,7,8,x,6,7,3\n"
        "2,claude,ws_a,5,5,5,5,11,3\n"
        "1,nobody,ws_zzz,5,5,5,5,5,3\n"
        "3,claude,ws_a,6,6\n"  # cut short: not a review with three empty scores
    )
    _import(path)
    campaign = Campaign.objects.get()
    faults = {(f["kind"], f["where"]) for f in campaign.import_faults}
    assert ("bad_score", "h.csv:2:Soundness") in faults and ("bad_score", "h.csv:3:Overall") in faults
    assert ("unmatched_row", "h.csv:4") in faults and ("unmatched_column", "h.csv:Vibes") in faults
    assert ("truncated_row", "h.csv:5") in faults
    assert not Review.objects.filter(assignment__reviewer__username="mlrbench-reviewer-3").exists()
    # The campaign holds the papers the file names: ws_b / gemini was imported but nobody reviewed it.
    assert [i.artifact.research_run.task.slug for i in campaign.items.all()] == ["ws_a"]
    assert not any(w.startswith("ws_b") for _, w in faults)
    review = Review.objects.get(assignment__reviewer__username="mlrbench-reviewer-1")
    assert review.score_of("novelty") == 7 and review.score_of("soundness") is None


def test_it_refuses_a_file_without_key_columns(tmp_path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(CommandError, match="missing column"):
        _import(path)
    with pytest.raises(CommandError, match="file not found"):
        _import(tmp_path / "nope.csv")


def test_it_exports_submitted_reviews_as_csv_and_json(tmp_path) -> None:
    make_paper(slug="ws_a", backbone="claude", figures={})
    make_rubric()
    path = tmp_path / "h.csv"
    path.write_text(
        "reviewer_id,model_name,workshop_name,Novelty,Clarity,Soundness,Significance,Overall\n1,claude,ws_a,7,8,6,6,7\n"
    )
    _import(path)
    out = io.StringIO()
    call_command("export_reviews", "--campaign", "study", "--format", "csv", stdout=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert len(rows) == 1 and rows[0]["novelty"] == "7" and rows[0]["system"] == "claude"
    out = io.StringIO()
    call_command("export_reviews", "--campaign", "study", "--format", "json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["rubric"]["dimensions"] == ["clarity", "novelty", "soundness", "significance", "overall"]
    assert data["reviews"][0]["scores"]["clarity"]["score"] == 8
    assert [f["kind"] for f in data["import_faults"]] == ["missing_review"]  # 1 of 2
    with pytest.raises(CommandError, match="no campaign"):
        call_command("export_reviews", "--campaign", "nope")


@needs_data
def test_it_seeds_the_study_campaign_once_the_papers_are_imported(settings) -> None:
    from review import demo

    settings.MLRBENCH_DIR = str(SHARED)
    out = io.StringIO()
    demo.seed(stdout=out)
    assert "not imported" in out.getvalue() and not Campaign.objects.exists()
    _released_papers()
    demo.seed(stdout=io.StringIO())
    demo.seed(stdout=io.StringIO())
    campaign = Campaign.objects.get(name=demo.CAMPAIGN_NAME)
    assert campaign.status == Campaign.Status.CLOSED
    assert Review.objects.filter(assignment__campaign=campaign).count() == 57
