"""import_human_reviews and the agreement file loaders on bad files: one line naming the file and
line, no traceback, nothing written; bad numbers are data issues reported per cell, never zeros."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import Profile
from agreement.data.loaders import LoadError, load_mlrbench
from review.models import Assignment, Campaign, Review
from tests.review.factories import make_paper, make_rubric

pytestmark = pytest.mark.django_db

HEADER = "reviewer_id,model_name,workshop_name,Novelty,Clarity,Soundness,Significance,Overall\n"


def _import(path) -> str:
    out = io.StringIO()
    call_command("import_human_reviews", str(path), "--campaign", "study", stdout=out)
    return out.getvalue()


def _written() -> tuple[int, int, int]:
    return Campaign.objects.count(), Assignment.objects.count(), Review.objects.count()


@pytest.fixture
def papers():
    make_paper(slug="iclr2025_a", backbone="claude", figures={})
    make_paper(slug="iclr2025_b", backbone="gemini", figures={})
    make_rubric()


def test_it_says_which_line_and_byte_of_a_csv_is_not_utf8(tmp_path, papers) -> None:
    path = tmp_path / "reviews.csv"
    good = HEADER + "r1,claude,iclr2025_a,7,7,7,7,7\n"
    path.write_bytes(good.encode() + b"r2,gemini,iclr2025_b,6,6,6,6,Caf\xe9\n")
    with pytest.raises(CommandError) as caught:
        _import(path)
    offset = len(good.encode()) + len("r2,gemini,iclr2025_b,6,6,6,6,Caf")
    assert str(caught.value) == f"{path}:3: file: not UTF-8 (byte offset {offset}: 0xe9); save it as UTF-8"
    assert "\n" not in str(caught.value) and _written() == (0, 0, 0)


def test_it_refuses_a_file_without_the_key_columns_and_writes_nothing(tmp_path, papers) -> None:
    path = tmp_path / "reviews.csv"
    path.write_text("reviewer,model_name\nr1,claude\n")
    with pytest.raises(CommandError, match=r"reviews.csv:1: header: missing column\(s\) reviewer_id, workshop_name"):
        _import(path)
    assert _written() == (0, 0, 0)


def test_it_reports_a_file_that_is_not_csv(tmp_path, papers) -> None:
    import csv

    path = tmp_path / "reviews.csv"
    path.write_text(HEADER + "r1,claude,iclr2025_a,7,7,7,7," + "x" * (csv.field_size_limit() + 1) + "\n")
    with pytest.raises(CommandError, match=r"reviews.csv:2: file: not readable as CSV \(field larger than field limit"):
        _import(path)
    assert _written() == (0, 0, 0)


def test_it_reports_bad_numbers_per_cell_and_keeps_the_valid_ones(tmp_path, papers) -> None:
    path = tmp_path / "reviews.csv"
    path.write_text(
        HEADER
        + "r1,claude,iclr2025_a,NaN,abc,7,7,7\n"  # two bad cells: reported, never stored as 0
        + "r2,gemini,iclr2025_b,6\n"  # a short row: a fault, never a review with four empty scores
        + "r3,gemini,iclr2025_b,5,5,5,5,5,extra\n"
    )
    out = _import(path)
    faults = {(f["kind"], f["where"]) for f in Campaign.objects.get().import_faults}
    assert ("bad_score", "reviews.csv:2:Novelty") in faults and ("bad_score", "reviews.csv:2:Clarity") in faults
    assert ("truncated_row", "reviews.csv:3") in faults and ("extra_cells", "reviews.csv:4") in faults
    assert "bad_score: reviews.csv:2:Novelty: 'NaN' is not an integer 1-10: left empty" in out
    first = Review.objects.get(assignment__reviewer__username="mlrbench-reviewer-r1")
    assert "novelty" not in first.scores and "clarity" not in first.scores and first.scores["overall"]["score"] == 7
    assert (
        "truncated_row: reviews.csv:3: 4 of 8 cells (no Clarity, Soundness, Significance, Overall): row skipped" in out
    )
    assert not Review.objects.filter(assignment__reviewer__username="mlrbench-reviewer-r2").exists()
    assert Review.objects.count() == 2 and not Profile.objects.exists()


def test_it_rolls_back_everything_when_the_import_fails_midway(tmp_path, monkeypatch, papers) -> None:
    from review.io import importers

    path = tmp_path / "reviews.csv"
    path.write_text(HEADER + "r1,claude,iclr2025_a,7,7,7,7,7\nr2,gemini,iclr2025_b,6,6,6,6,6\n")

    def broken(*args, **kwargs):
        raise importers.ImportError_("simulated failure after the first rows")

    monkeypatch.setattr(importers, "_report_coverage", broken)
    with pytest.raises(CommandError, match="simulated failure"):
        _import(path)
    assert _written() == (0, 0, 0)


def test_it_loads_agreement_files_only_when_they_are_utf8_csv(tmp_path) -> None:
    human, llm = tmp_path / "human.csv", tmp_path / "llm.csv"
    human.write_bytes(b"reviewer_id,model_name,workshop_name,Novelty\nr1,claude,w,\xff\n")
    llm.write_text("workshop_name,model_name,Novelty\nw,claude,5\n")
    with pytest.raises(LoadError, match=r"human.csv:2: file: not UTF-8 \(byte offset 57: 0xff\)"):
        load_mlrbench(human, llm)
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError, match=r"human.csv:2: file: not UTF-8"):
        call_command("agreement", "--human", str(human), "--llm", str(llm), stdout=out, stderr=err)


def test_it_skips_a_row_with_an_empty_key_cell_and_names_a_rubric_dimension_no_column_fills(tmp_path, papers) -> None:
    path = tmp_path / "reviews.csv"
    path.write_text(
        "reviewer_id,model_name,workshop_name,Novelty,Clarity,Soundness,Overall\n"  # no Significance column
        + "r1,claude,iclr2025_a,7,7,7,7\n"
        + ",gemini,iclr2025_b,6,6,6,6\n"  # whose review is it? skipped, never stored under an empty name
        + "r2, ,iclr2025_b,6,6,6,6\n"
    )
    out = _import(path)
    faults = Campaign.objects.get().import_faults
    kinds = {(f["kind"], f["where"]) for f in faults}
    assert ("bad_row", "reviews.csv:3") in kinds and ("bad_row", "reviews.csv:4") in kinds
    assert "bad_row: reviews.csv:3: empty reviewer_id, model_name or workshop_name: row skipped" in out
    assert {
        "kind": "missing_column",
        "where": "reviews.csv",
        "detail": "no column for rubric dimension Significance",
    } in faults
    review = Review.objects.get()  # only r1's; its other dimensions kept, Significance left empty
    assert review.assignment.reviewer.username == "mlrbench-reviewer-r1"
    assert review.scores["novelty"]["score"] == 7 and "significance" not in review.scores
    assert not Assignment.objects.filter(reviewer__username__in=["mlrbench-reviewer-", "mlrbench-reviewer-r2"]).exists()
