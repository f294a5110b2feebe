"""The agreement page's new parts in the app: the verdict first, the settings form with its
defaults, progress instead of faults, results computed once per (campaign state, settings),
and the admin-only disagreement workbench with its tags (exported, summarised in the report)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.utils import timezone

from agreement import cache
from review.models import Assignment, DisagreementTag, Review
from tests.agreement.report.test_campaign import _scores, make_campaign
from tests.review.factories import make_paper, make_reviewer

pytestmark = pytest.mark.django_db


def _page(client, campaign, query: str = "") -> str:
    response = client.get(f"/agreement/{campaign.code}/{query}")
    assert response.status_code == 200
    return response.content.decode()


# --- the page ------------------------------------------------------------------------------


def test_it_puts_the_verdict_table_before_anything_else(client_for, admin_user) -> None:
    campaign = make_campaign()
    page = _page(client_for(admin_user), campaign)
    main = page.split("<main", 1)[1]
    assert main.index('id="verdict"') < main.index('id="agreement-settings"') < main.index('id="coverage"')
    assert main.index('id="verdict"') < main.index('id="toc"')
    # 5 criteria x 3 judge views, each cell linking to its evidence section.
    verdict = main.split('id="verdict"', 1)[1].split("</section>", 1)[0]
    links = [part.split('"', 1)[0] for part in verdict.split('href="#')[1:]]
    assert len(links) == 15
    client = client_for(admin_user)
    for anchor in links:  # evidence-<criterion>-<view>: in the closed criterion section, fetched when opened
        c = anchor.split("-")[1]
        assert f'<details class="criterion" id="crit-{c}"' in page
        evidence = client.get(f"/agreement/{campaign.code}/criteria/{c}/", HTTP_X_FRAGMENT="1").content.decode()
        assert f'id="{anchor}"' in evidence
    assert "verdict rule v2" in verdict
    # Six items are too few for the per-reviewer alt-test: the small-study tests decide, and say so.
    assert "decided by: combined-annotator Wilcoxon alt-test" in verdict


def test_it_shows_the_settings_in_effect_and_their_defaults(client_for, admin_user) -> None:
    campaign = make_campaign()
    page = _page(client_for(admin_user), campaign, "?epsilon=0.2")
    assert 'name="epsilon" value="0.2"' in page and "default: 0.1" in page
    assert 'name="threshold" value="6.0"' in page and "default: 6.0" in page
    assert 'name="margin" value="0.5"' in page and 'name="bootstrap" value="1000"' in page
    assert "alt-test cost margin epsilon: 0.2" in page  # provenance, a readable list


def test_it_names_statistics_plainly_with_the_identifier_in_a_tooltip(client_for, admin_user) -> None:
    campaign = make_campaign()
    # The statistics tables are a criterion's evidence, fetched when its section is opened.
    page = client_for(admin_user).get(f"/agreement/{campaign.code}/criteria/0/", HTTP_X_FRAGMENT="1").content.decode()
    assert '<span title="identifier: alpha_ordinal">Krippendorff&#x27;s alpha, ordinal (reviewers)</span>' in page
    assert '<span title="identifier: kappa_quadratic">Cohen&#x27;s kappa, quadratic weights</span>' in page
    assert "<td>alpha_ordinal</td>" not in page


def test_it_shows_an_open_campaigns_missing_reviews_as_progress_not_faults(client_for, admin_user) -> None:
    campaign = make_campaign()
    # A judged item nobody has reviewed yet: normal progress of an open campaign.
    from judge.models import Judgment
    from review.campaigns.services import campaign_add_items

    paper = make_paper(slug="ws_d", figures={})
    campaign_add_items(campaign=campaign, artifacts=[paper])
    Judgment.objects.create(artifact=paper, rubric=campaign.rubric, judge_model="anthropic:claude-judge",
                            status="succeeded", scores=_scores([5] * 5))  # fmt: skip
    page = _page(client_for(admin_user), campaign)
    faults = page.split('id="faults"', 1)[1].split("</section>", 1)[0]
    assert "no_human_review" not in faults and "failed_judgment" in faults
    coverage = page.split('id="coverage"', 1)[1].split("</section>", 1)[0]
    assert "5 of 7 items are compared" in coverage
    assert (
        "The campaign is open" in coverage
        and "Progress: 12 of 14 reviews submitted; 5 of 7 items fully reviewed" in coverage
    )
    assert "no human review: 1 item(s)" in coverage


# --- caching --------------------------------------------------------------------------------------


def test_it_computes_once_for_the_page_and_its_three_downloads(client_for, admin_user) -> None:
    campaign = make_campaign()
    client = client_for(admin_user)
    before = cache.computed["analysis"]
    first = client.get(f"/agreement/{campaign.code}/?bootstrap=50")
    assert first["X-Agreement-Cache"] == "miss" and cache.computed["analysis"] == before + 1
    second = client.get(f"/agreement/{campaign.code}/?bootstrap=50")
    assert second["X-Agreement-Cache"] == "hit" and cache.computed["analysis"] == before + 1
    renders = {fmt: cache.computed[f"render:{fmt}"] for fmt in ("html", "csv", "json")}
    for fmt in ("html", "csv", "json"):
        one = client.get(f"/agreement/{campaign.code}/report.{fmt}?bootstrap=50")
        two = client.get(f"/agreement/{campaign.code}/report.{fmt}?bootstrap=50")
        assert (one["X-Agreement-Cache"], two["X-Agreement-Cache"]) == ("miss", "hit")
        assert one.content == two.content
        assert cache.computed[f"render:{fmt}"] == renders[fmt] + 1
    assert cache.computed["analysis"] == before + 1  # the downloads reused the page's analysis
    # Other settings are another result.
    client.get(f"/agreement/{campaign.code}/?bootstrap=50&threshold=7")
    assert cache.computed["analysis"] == before + 2


def test_it_recomputes_when_the_campaign_changes(client_for, admin_user) -> None:
    campaign = make_campaign()
    client = client_for(admin_user)
    client.get(f"/agreement/{campaign.code}/?bootstrap=0")
    before = cache.computed["analysis"]
    item = campaign.items.get(artifact__research_run__task__slug="ws_c", artifact__research_run__backbone="gemini")
    a = Assignment.objects.create(campaign=campaign, item=item, reviewer=make_reviewer("late"), slot=3,
                                  status="submitted")  # fmt: skip
    Review.objects.create(assignment=a, scores=_scores([4] * 5), status="submitted", submitted_at=timezone.now())
    response = client.get(f"/agreement/{campaign.code}/?bootstrap=0")
    assert response["X-Agreement-Cache"] == "miss" and cache.computed["analysis"] == before + 1
    assert "6 item(s) compared, 13 submitted review(s)" in response.content.decode()


# --- the workbench ------------------------------------------------------------------------------


def test_it_lists_a_criterions_items_by_disagreement(client_for, admin_user) -> None:
    campaign = make_campaign()
    response = client_for(admin_user).get(f"/agreement/{campaign.code}/disagreements/?criterion=4")
    assert response.status_code == 200
    rows = response.context["rows"]
    assert response.context["criterion_name"] == "Overall" and len(rows) == 6  # the single-review item too
    gaps = [r["gap"] for r in rows]
    assert gaps == sorted(gaps, reverse=True)
    # ws_c/gemini: one review of 5, judges 6 and 6 -> judges' mean 6, gap 1
    top = next(r for r in rows if r["label"].startswith("ws_c/gemini"))
    assert (top["human_mean"], top["judge"], top["gap"]) == (5.0, 6.0, 1.0)
    judge_a = client_for(admin_user).get(
        f"/agreement/{campaign.code}/disagreements/?criterion=4&view=judge:anthropic:claude-judge"
    )
    assert next(r for r in judge_a.context["rows"] if r["label"].startswith("ws_a/gemini"))["judge"] == 5.0


def test_it_opens_an_item_beside_the_judge_and_the_reviewers(client_for, admin_user) -> None:
    campaign = make_campaign()
    item = campaign.items.get(artifact__research_run__task__slug="ws_a", artifact__research_run__backbone="claude")
    response = client_for(admin_user).get(f"/agreement/{campaign.code}/disagreements/{item.code}/?criterion=4")
    assert response.status_code == 200
    page = response.content.decode()
    assert "A paper on ws_a" in page.split('id="item-content"', 1)[1]
    ev = response.context["evidence"]
    assert [j["model"] for j in ev["judgments"]] == ["anthropic:claude-judge", "google:flaky-judge", "openai:gpt-judge"]
    assert [r["score"] for r in ev["reviews"]] == [6, 6]
    assert page.count("<strong>study-rev") == 2 and "reply was not JSON" in page


def test_it_saves_and_replaces_a_tag_and_exports_it(client_for, admin_user) -> None:
    campaign = make_campaign()
    client = client_for(admin_user)
    item = campaign.items.first()
    url = f"/agreement/{campaign.code}/disagreements/{item.code}/tag?criterion=4"
    response = client.post(url, {"criterion": "overall", "cause": "judge_misread", "note": "missed Table 2"})
    assert response.status_code == 302 and response["Location"].endswith(f"/{item.code}/?criterion=4")
    client.post(url, {"criterion": "overall", "cause": "rubric_ambiguity", "note": "'significance' unclear"})
    tag = DisagreementTag.objects.get()
    assert (tag.cause, tag.note, tag.tagged_by) == ("rubric_ambiguity", "'significance' unclear", admin_user)
    rows = list(csv.DictReader(io.StringIO(client.get(f"/agreement/{campaign.code}/tags.csv").content.decode())))
    assert rows == [
        {"item": item.code, "artifact": str(item.artifact.code), "run": "", "criterion": "Overall", "criterion_key": "overall",
         "cause": "rubric_ambiguity", "cause_label": "rubric ambiguity", "note": "'significance' unclear",
         "tagged_by": "ada_admin", "updated_at": rows[0]["updated_at"]}
    ]  # fmt: skip
    report = json.loads(client.get(f"/agreement/{campaign.code}/report.json?bootstrap=0").content)
    assert report["disagreement_tags"]["summary"]["by_criterion"] == {"Overall": {"rubric_ambiguity": 1}}
    assert report["disagreement_tags"]["tags"][0]["note"] == "'significance' unclear"
    page = _page(client, campaign, "?bootstrap=0")
    tags = page.split('id="tags"', 1)[1].split("</section>", 1)[0]
    assert "Disagreement tags (1)" in tags and "<th>Overall</th>" in tags
    listing = client.get(f"/agreement/{campaign.code}/disagreements/?criterion=4").content.decode()
    assert "rubric ambiguity" in listing


def test_a_new_tag_reaches_a_cached_download(client_for, admin_user) -> None:
    campaign = make_campaign()
    client = client_for(admin_user)
    client.get(f"/agreement/{campaign.code}/report.json?bootstrap=0")
    item = campaign.items.first()
    client.post(f"/agreement/{campaign.code}/disagreements/{item.code}/tag",
                {"criterion": "novelty", "cause": "other", "note": ""})  # fmt: skip
    before = cache.computed["analysis"]
    report = json.loads(client.get(f"/agreement/{campaign.code}/report.json?bootstrap=0").content)
    assert report["disagreement_tags"]["summary"]["total"] == 1
    assert cache.computed["analysis"] == before  # tags re-render the report, not the statistics


@pytest.mark.parametrize(
    "data",
    [
        {"criterion": "overall", "cause": "judge was tired", "note": ""},
        {"criterion": "not_a_dimension", "cause": "other", "note": ""},
        {"criterion": "overall", "cause": "other", "note": "x" * 5001},
    ],
)
def test_it_refuses_a_bad_tag_and_keeps_the_old_one(client_for, admin_user, data) -> None:
    campaign = make_campaign()
    client = client_for(admin_user)
    item = campaign.items.first()
    url = f"/agreement/{campaign.code}/disagreements/{item.code}/tag"
    client.post(url, {"criterion": "overall", "cause": "reviewer_error", "note": "kept"})
    response = client.post(url, data)
    assert response.status_code == 400 and response.content
    assert DisagreementTag.objects.get().note == "kept"


# --- permissions ------------------------------------------------------------------------------------

READS = (
    "/agreement/{code}/disagreements/?criterion=0",
    "/agreement/{code}/disagreements/{item}/?criterion=0",
    "/agreement/{code}/tags.csv",
    "/agreement/{code}/tags.json",
)
TAG = "/agreement/{code}/disagreements/{item}/tag"
# The reviewer's own name is in the page header; other reviewers' names are not.
SECRETS = ("claude-judge", "gpt-judge", "judge misread", "human mean", "Disagreements", "study-rev1", "study-rev2")


def _urls(campaign):
    item = campaign.items.first().code
    return [u.format(code=campaign.code, item=item) for u in (*READS, TAG)]


def test_it_gives_a_reviewer_of_the_campaign_no_workbench(client_for) -> None:
    campaign = make_campaign()
    member = Assignment.objects.filter(campaign=campaign).first().reviewer
    client = client_for(member)
    for url in _urls(campaign):
        response = (
            client.post(url, {"criterion": "overall", "cause": "other"}) if url.endswith("tag") else client.get(url)
        )
        assert response.status_code == 403, url
        assert not any(s in response.content.decode() for s in SECRETS), url
    assert not DisagreementTag.objects.exists()


def test_it_refuses_researchers_the_workbench(client_for, researcher, other_researcher) -> None:
    campaign = make_campaign()
    for user in (researcher, other_researcher):
        client = client_for(user)
        for url in _urls(campaign):
            response = (
                client.post(url, {"criterion": "overall", "cause": "other"}) if url.endswith("tag") else client.get(url)
            )
            assert response.status_code == 403, url


def test_it_sends_anonymous_visitors_of_the_workbench_to_the_login(client_for) -> None:
    campaign = make_campaign()
    client = client_for(None)
    for url in _urls(campaign):
        response = client.post(url, {}) if url.endswith("tag") else client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=/agreement/")


def test_it_answers_404_for_bad_codes_in_the_workbench(client_for, admin_user) -> None:
    campaign = make_campaign()
    client = client_for(admin_user)
    other = make_campaign("other")
    foreign = other.items.first().code  # an item of another campaign
    zero = "00000000-0000-0000-0000-000000000000"
    assert client.get(f"/agreement/{zero}/disagreements/").status_code == 404
    assert client.get(f"/agreement/{campaign.code}/disagreements/i-nope/?criterion=0").status_code == 404
    assert client.get(f"/agreement/{campaign.code}/disagreements/{foreign}/?criterion=0").status_code == 404
    assert client.get(f"/agreement/{campaign.code}/disagreements/?criterion=99").status_code == 404
    assert client.get(f"/agreement/{campaign.code}/disagreements/?view=judge:nobody").status_code == 404
    assert client.get(f"/agreement/{campaign.code}/tags.xml").status_code == 404
    response = client.post(
        f"/agreement/{campaign.code}/disagreements/{foreign}/tag", {"criterion": "overall", "cause": "other"}
    )
    assert response.status_code == 404 and not DisagreementTag.objects.exists()


def test_it_refuses_wrong_methods_in_the_workbench(client_for, admin_user) -> None:
    campaign = make_campaign()
    client = client_for(admin_user)
    *reads, tag = _urls(campaign)
    for url in reads:
        assert client.post(url).status_code == 405, url
    assert client.get(tag).status_code == 405


def test_it_recomputes_when_a_pending_judgment_finishes(client_for, admin_user) -> None:
    from judge.models import Judgment

    campaign = make_campaign()
    client = client_for(admin_user)
    artifact = campaign.items.first().artifact
    pending = Judgment.objects.create(artifact=artifact, rubric=campaign.rubric, judge_model="x:late-judge",
                                      status="running")  # fmt: skip
    page = client.get(f"/agreement/{campaign.code}/?bootstrap=0").content.decode()
    assert (
        "1 judgment(s) pending" in page and "x:late-judge" not in page.split('id="faults"', 1)[1].split("</section>")[0]
    )
    before = cache.computed["analysis"]
    pending.status, pending.scores, pending.finished_at = "succeeded", _scores([3] * 5), timezone.now()
    pending.save()
    response = client.get(f"/agreement/{campaign.code}/?bootstrap=0")
    assert response["X-Agreement-Cache"] == "miss" and cache.computed["analysis"] == before + 1
    assert "<th>x:late-judge</th>" in response.content.decode()  # a verdict column of its own
    evidence = client.get(f"/agreement/{campaign.code}/criteria/0/?bootstrap=0", HTTP_X_FRAGMENT="1")
    assert "judge:x:late-judge" in evidence.content.decode()
