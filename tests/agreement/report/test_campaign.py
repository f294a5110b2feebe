"""The in-app agreement of one campaign: data from real rows, equality with the file command,
who may see it, and (with the released data) the MLR-Bench study imported into the app."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from agreement.data.selectors import campaign_agreement_data
from judge.models import Judgment, Rubric
from review.campaigns.services import campaign_add_items
from review.models import Assignment, Campaign, Review
from tests.review.factories import END_TO_END_DIMENSIONS, make_paper, make_reviewer, make_rubric

pytestmark = pytest.mark.django_db

CRITERIA = [d["name"] for d in END_TO_END_DIMENSIONS]  # Clarity, Novelty, Soundness, Significance, Overall
JUDGES = ("anthropic:claude-judge", "openai:gpt-judge")

# Per item (slug, system): reviewer scores (one list per reviewer, per criterion) and judge scores.
HUMANS = {
    ("ws_a", "claude"): [[6, 7, 5, 6, 6], [7, 7, 4, 5, 6]],
    ("ws_a", "gemini"): [[4, 5, 3, 4, 4], [5, 3, 4, 4, 3]],
    ("ws_b", "claude"): [[8, 8, 7, 7, 8], [6, 7, 7, 8, 7], [7, 6, 6, 7, 7]],
    ("ws_b", "gemini"): [[3, 4, 2, 3, 3], [4, 4, 3, 2, 3]],
    ("ws_c", "claude"): [[5, 6, 6, 5, 5], [7, 6, 5, 6, 6]],
    ("ws_c", "gemini"): [[6, 5, 5, 6, 5]],  # one review: strict sets it aside, mlrbench keeps it
}
JUDGE_SCORES = {
    ("ws_a", "claude"): ([7, 8, 6, 7, 7], [6, 7, 5, 6, 6]),
    ("ws_a", "gemini"): ([6, 6, 5, 5, 5], [5, 5, 4, 5, 4]),
    ("ws_b", "claude"): ([8, 7, 7, 8, 8], [8, 8, 6, 7, 7]),
    ("ws_b", "gemini"): ([5, 5, 4, 4, 4], [4, 6, 3, 4, 4]),
    ("ws_c", "claude"): ([6, 7, 6, 6, 6], [7, 6, 6, 6, 7]),
    ("ws_c", "gemini"): ([7, 6, 6, 6, 6], [6, 6, 5, 6, 6]),
}


def _scores(values: list[int]) -> dict[str, dict[str, Any]]:
    return {d["key"]: {"score": v, "justification": "x"} for d, v in zip(END_TO_END_DIMENSIONS, values, strict=True)}


def make_campaign(name: str = "study") -> Campaign:
    rubric = make_rubric()
    papers = {key: make_paper(slug=key[0], backbone=key[1], figures={}) for key in HUMANS}
    campaign = Campaign.objects.create(name=name, rubric=rubric, reviewers_per_item=2)
    campaign_add_items(campaign=campaign, artifacts=list(papers.values()))
    reviewers = [make_reviewer(f"{name}-rev{n}") for n in range(3)]
    now = timezone.now()
    for key, rows in HUMANS.items():
        item = campaign.items.get(artifact=papers[key])
        for slot, values in enumerate(rows, start=1):
            a = Assignment.objects.create(
                campaign=campaign, item=item, reviewer=reviewers[slot - 1], slot=slot, status="submitted"
            )
            Review.objects.create(assignment=a, scores=_scores(values), status="submitted", submitted_at=now)
        for k, model in enumerate(JUDGES):
            Judgment.objects.create(
                artifact=papers[key], rubric=rubric, judge_model=model, status="succeeded",
                scores=_scores(JUDGE_SCORES[key][k]), prompt_hash=f"hash-{k}",
            )  # fmt: skip
    # A draft is an unfinished opinion: never counted.
    item = campaign.items.get(artifact=papers[("ws_c", "gemini")])
    draft = Assignment.objects.create(campaign=campaign, item=item, reviewer=reviewers[1], slot=2, status="started")
    Review.objects.create(assignment=draft, scores=_scores([1, 1, 1, 1, 1]), status="draft")
    # A failed judgment is shown as a fault, never scored.
    Judgment.objects.create(
        artifact=papers[("ws_a", "claude")], rubric=rubric, judge_model="google:flaky-judge", status="failed",
        error="reply was not JSON",
    )  # fmt: skip
    return campaign


def write_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The same numbers in MLR-Bench's file layout, for the file-based command."""
    human, llm, judges = tmp_path / "human_review.csv", tmp_path / "llm_judge.csv", tmp_path / "agent_reviews"
    with human.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["reviewer_id", "model_name", "workshop_name", *CRITERIA])
        for (slug, system), rows in HUMANS.items():
            for r, values in enumerate(rows):
                w.writerow([r, system, slug, *values])
    with llm.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["workshop_name", "model_name", *CRITERIA])
        for (slug, system), (a, b) in JUDGE_SCORES.items():
            w.writerow([slug, system, *[(x + y) / 2 for x, y in zip(a, b, strict=True)]])
    for k, model in enumerate(JUDGES):
        for (slug, system), pair in JUDGE_SCORES.items():
            path = judges / f"subset_reviews_{model}" / slug / f"review_{system}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({c: {"score": v} for c, v in zip(CRITERIA, pair[k], strict=True)}))
    return human, llm, judges


def file_command(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command("agreement", *args, "--format", "json", "--bootstrap", "0", stdout=out)
    return json.loads(out.getvalue())


def assert_same_statistics(app: dict[str, Any], files: dict[str, Any], views: dict[str, str]) -> None:
    """Every statistic of every criterion and judge view (app view name -> file view name)."""
    assert set(app["criteria"]) == set(files["criteria"])
    compared = 0
    for crit, block in app["criteria"].items():
        fblock = files["criteria"][crit]
        pairs = [(block["humans"], fblock["humans"])]
        pairs += [(block["views"][a], fblock["views"][f]) for a, f in views.items()]
        for mine, theirs in pairs:
            assert set(mine) == set(theirs)
            for key, rec in mine.items():
                for field in ("estimate", "p_value", "p_holm", "ci_low", "ci_high"):
                    x, y = rec[field], theirs[key][field]
                    if x is None or y is None:
                        assert x is None and y is None, (crit, key, field, x, y)
                    else:
                        assert x == pytest.approx(y, rel=1e-9, abs=1e-12), (crit, key, field, x, y)
                        compared += 1
                assert rec["n"] == theirs[key]["n"], (crit, key)
    assert compared > 100


def download(client, campaign: Campaign, fmt: str, query: str = "") -> Any:
    return client.get(f"/agreement/{campaign.code}/report.{fmt}{query}")


# --- building the data ------------------------------------------------------------------------


def test_it_builds_the_data_from_submitted_reviews_and_succeeded_judgments() -> None:
    campaign = make_campaign()
    data = campaign_agreement_data(campaign=campaign)
    assert data.criteria == tuple(CRITERIA)
    assert len(data.items) == 6 and set(data.item_system) == {"claude", "gemini"}
    assert len(data.human_item) == sum(len(r) for r in HUMANS.values())  # the draft is not counted
    assert not (data.human_scores == 1).all(axis=1).any()
    assert data.judges == JUDGES  # the failed judge contributes no column...
    assert [f.kind for f in data.faults] == ["failed_judgment"]  # ...and is listed
    assert "reply was not JSON" in data.faults[0].detail
    i = next(n for n, label in enumerate(data.items) if label.startswith("ws_b/claude"))
    assert data.judge_scores[i, 1].tolist() == JUDGE_SCORES[("ws_b", "claude")][1]
    assert data.meta["judge_models"] == list(JUDGES)
    assert data.meta["prompt_hashes"] == [f"{JUDGES[0]}: hash-0", f"{JUDGES[1]}: hash-1"]
    assert "end to end (paper) rubric v1" in data.meta["rubric_version"]


def test_it_reads_judgments_under_a_chosen_rubric_version_and_the_latest_of_repeats() -> None:
    campaign = make_campaign()
    v2 = make_rubric(version=2)
    artifact = campaign.items.first().artifact
    for value in (3, 9):  # judged twice under v2: the later one counts
        Judgment.objects.create(
            artifact=artifact, rubric=v2, judge_model="openai:v2-judge", status="succeeded",
            scores=_scores([value] * 5),
        )  # fmt: skip
    data = campaign_agreement_data(campaign=campaign, rubric=v2)
    assert data.judges == ("openai:v2-judge",)
    assert data.judge_scores[0, 0].tolist() == [9.0] * 5
    assert [f.kind for f in data.faults] == ["repeated_judgment"]
    assert "rubric v2" in data.meta["rubric_version"]


def test_it_marks_off_scale_and_missing_scores_without_dropping_the_rest() -> None:
    campaign = make_campaign()
    review = Review.objects.filter(status="submitted").first()
    review.scores["novelty"]["score"] = 42
    del review.scores["clarity"]
    review.save()
    data = campaign_agreement_data(campaign=campaign)
    kinds = sorted(f.kind for f in data.faults)
    assert kinds == ["bad_value", "failed_judgment", "missing_score"]
    row = data.human_scores[0]
    assert math.isnan(row[0]) and math.isnan(row[1]) and not math.isnan(row[2])


# --- equality with the file command -------------------------------------------------------------


@pytest.mark.parametrize("pairing", ["strict", "mlrbench"])
def test_it_equals_the_file_command_on_the_same_numbers(tmp_path, client_for, admin_user, pairing) -> None:
    campaign = make_campaign()
    human, llm, judges = write_files(tmp_path)
    files = file_command("--human", str(human), "--llm", str(llm), "--judge-reviews", str(judges),
                         "--pairing", pairing)  # fmt: skip
    response = download(client_for(admin_user), campaign, "json", f"?pairing={pairing}&bootstrap=0")
    assert response.status_code == 200
    app = json.loads(response.content)
    assert app["views"] == [f"judge:{m}" for m in JUDGES] + ["judges_mean"]
    assert_same_statistics(app, files, {v: v for v in app["views"]})
    assert app["sizes"]["items"] == files["sizes"]["items"] == (5 if pairing == "strict" else 6)


# --- the page and its downloads ----------------------------------------------------------------


def test_it_shows_every_criterion_closed_with_a_link_to_its_evidence(client_for, admin_user) -> None:
    campaign = make_campaign()
    response = client_for(admin_user).get(f"/agreement/{campaign.code}/?pairing=mlrbench&margin=0.75&bootstrap=50")
    assert response.status_code == 200
    page = response.content.decode()
    query = "?pairing=mlrbench&amp;margin=0.75&amp;bootstrap=50"
    for c, crit in enumerate(CRITERIA):
        assert f"<summary><h2>{crit}</h2></summary>" in page
        assert f'data-src="/agreement/{campaign.code}/criteria/{c}/{query}"' in page  # same settings
    # The evidence and charts are not in the summary: they come with each criterion's fragment.
    assert 'class="chart"' not in page and "Judge view:" not in page and "agreement-charts" not in page
    # plotly.js is named for agreement.js to fetch with the first chart, not loaded with the page.
    assert re.search(
        r'<script src="/static/js/agreement[^"]*\.js" data-plotly="/static/vendor/plotly\.min[^"]*\.js">', page
    )
    assert not re.search(r'<script src="[^"]*plotly', page)
    assert "mlrbench: the MLR-Bench authors" in page and "+/-0.75" in page
    assert "failed_judgment" in page  # faults are shown with the numbers
    assert f"report.csv{query}" in page
    assert "https://" not in page.split("<footer")[0]  # nothing from a CDN


def test_it_downloads_reports_that_pin_what_a_reader_needs(client_for, admin_user) -> None:
    campaign = make_campaign()
    client = client_for(admin_user)
    query = "?pairing=strict&margin=0.6&bootstrap=100&seed=7"
    data = json.loads(download(client, campaign, "json", query).content)
    assert data["settings"] | {"bootstrap_resamples": 100, "bootstrap_seed": 7, "tost_margin": 0.6} == data["settings"]
    assert data["pairing"]["policy"] == "strict"
    assert data["meta"]["judge_models"] == list(JUDGES)
    assert data["meta"]["prompt_hashes"] == [f"{JUDGES[0]}: hash-0", f"{JUDGES[1]}: hash-1"]
    assert data["sizes"]["human_reviews"] == 11 and data["sizes"]["items"] == 5
    assert str(campaign.code) in data["meta"]["campaign"]
    response = download(client, campaign, "csv", query)
    assert response["Content-Disposition"] == 'attachment; filename="agreement-study-strict.csv"'
    lines = response.content.decode().splitlines()
    [provenance] = next(csv.reader(lines[:1]))  # one quoted cell (benchmark.csv_tables: no stray cells)
    assert provenance.startswith("# pairing=strict") and '"tost_margin": 0.6' in provenance
    rows = list(csv.DictReader(lines[1:]))
    assert {r["criterion"] for r in rows} == set(CRITERIA)
    verdicts = [r for r in rows if r["key"] == "verdict"]  # the verdict leads the CSV too
    assert rows[: len(verdicts)] == verdicts and len(verdicts) == 15
    assert verdicts[0]["statistic"] == "not shown" and "verdict rule v2" in verdicts[0]["extra"]
    assert all("B=100" in r["ci_method"] for r in rows if r["key"] == "mad_judge_human_mean")
    page = download(client, campaign, "html", query).content.decode()
    assert "plotly.js v" in page and "<script src=" not in page
    for pinned in (
        "hash-0",
        "anthropic:claude-judge",
        "rubric v1",
        "strict",
        "TOST margin (points): 0.6",  # provenance is a readable list, not raw values
        "@media print",
    ):
        assert pinned in page


@pytest.mark.parametrize(
    "query", ["?pairing=nonsense", "?margin=0", "?bootstrap=-1", f"?bootstrap={10**6}", "?rubric=not-a-rubric"]
)
def test_it_refuses_bad_settings_with_a_form_error(client_for, admin_user, query) -> None:
    campaign = make_campaign()
    response = client_for(admin_user).get(f"/agreement/{campaign.code}/{query}")
    assert response.status_code == 400
    assert 'class="error"' in response.content.decode() and "agreement-chart-" not in response.content.decode()
    assert download(client_for(admin_user), campaign, "json", query).status_code == 400


def test_it_says_so_when_the_rubrics_share_no_criterion(client_for, admin_user) -> None:
    campaign = make_campaign()
    other = Rubric.objects.create(
        stage="idea", version=1, name="Idea", instructions="x",
        dimensions=[{"key": "feasibility", "name": "Feasibility", "min": 1, "max": 10, "kind": "score"}],
    )  # fmt: skip
    Judgment.objects.create(artifact=campaign.items.first().artifact, rubric=other, judge_model="x:y",
                            status="succeeded", scores={"feasibility": {"score": 5}})  # fmt: skip
    response = client_for(admin_user).get(f"/agreement/{campaign.code}/?rubric={other.code}")
    assert response.status_code == 400 and "share no score dimension" in response.content.decode()


def test_the_campaign_page_links_to_its_agreement(client_for, admin_user) -> None:
    campaign = make_campaign()
    page = client_for(admin_user).get(f"/review/campaigns/{campaign.code}/").content.decode()
    assert f'href="/agreement/{campaign.code}/"' in page


# --- permissions ----------------------------------------------------------------------------------

URLS = ("/agreement/{code}/", "/agreement/{code}/report.html", "/agreement/{code}/report.csv",
        "/agreement/{code}/report.json")  # fmt: skip


@pytest.mark.parametrize("url", URLS)
def test_it_gives_a_reviewer_of_the_campaign_no_statistics(client_for, url) -> None:
    campaign = make_campaign()
    member = Assignment.objects.filter(campaign=campaign).first().reviewer
    response = client_for(member).get(url.format(code=campaign.code))
    assert response.status_code in (403, 404)
    body = response.content.decode()
    for secret in ("mann_whitney", "claude-judge", "hash-0", "Spearman", "judge:"):
        assert secret not in body


@pytest.mark.parametrize("url", URLS)
def test_it_refuses_researchers(client_for, researcher, other_researcher, url) -> None:
    campaign = make_campaign()
    for user in (researcher, other_researcher):
        assert client_for(user).get(url.format(code=campaign.code)).status_code == 403


@pytest.mark.parametrize("url", URLS)
def test_it_sends_anonymous_visitors_to_the_login(client_for, url) -> None:
    campaign = make_campaign()
    response = client_for(None).get(url.format(code=campaign.code))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=/agreement/")


def test_it_answers_404_for_a_bad_code_or_format(client_for, admin_user) -> None:
    campaign = make_campaign()
    client = client_for(admin_user)
    assert client.get("/agreement/00000000-0000-0000-0000-000000000000/").status_code == 404
    assert client.get("/agreement/not-a-uuid/").status_code == 404
    assert client.get("/agreement/00000000-0000-0000-0000-000000000000/report.json").status_code == 404
    assert download(client, campaign, "pdf").status_code == 404


@pytest.mark.parametrize("url", URLS)
def test_it_refuses_other_methods(client_for, admin_user, url) -> None:
    campaign = make_campaign()
    assert client_for(admin_user).post(url.format(code=campaign.code)).status_code == 405


# --- the released MLR-Bench study, imported into the app -----------------------------------------

MLRBENCH = Path(settings.MLRBENCH_DIR or Path(settings.BASE_DIR).parent / "shared" / "mlrbench")
RELEASED_HUMAN = MLRBENCH / "human_eval" / "human_review.csv"
needs_mlrbench = pytest.mark.shared_data(RELEASED_HUMAN, MLRBENCH / "agent_results")


@pytest.fixture
def released_study(db) -> Campaign:
    out = io.StringIO()
    call_command("import_mlr_results", str(MLRBENCH), stdout=out)
    call_command("import_human_reviews", str(RELEASED_HUMAN), "--campaign", "MLR-Bench study", stdout=out)
    return Campaign.objects.get(name="MLR-Bench study")


def _first_of_duplicates(src: Path, dst: Path) -> None:
    """The released file with each repeated (reviewer, paper) row dropped after its first, as the
    review app stores it (one review per reviewer and item)."""
    with src.open(newline="") as fh:
        rows = list(csv.reader(fh))
    seen, kept = set(), [rows[0]]
    for row in rows[1:]:
        key = tuple(row[:3])
        if key not in seen:
            seen.add(key)
            kept.append(row)
    with dst.open("w", newline="") as fh:
        csv.writer(fh).writerows(kept)


@needs_mlrbench
@pytest.mark.parametrize("pairing", ["mlrbench", "strict"])
def test_it_reproduces_the_file_analysis_of_the_imported_study(
    released_study, tmp_path, client_for, admin_user, pairing
) -> None:
    """The app holds one review per reviewer and paper (the import keeps the first of the three
    repeated rows and lists them), so its numbers equal the file command on the released files
    with those three rows dropped - per judge and for the judges' mean - under either pairing."""
    kinds = [f["kind"] for f in released_study.import_faults]
    assert kinds.count("duplicate_review") == 3
    human = tmp_path / "human_review.csv"
    _first_of_duplicates(RELEASED_HUMAN, human)
    llm = MLRBENCH / "human_eval" / "llm_judge.csv"
    per_judge = file_command("--human", str(human), "--llm", str(llm), "--pairing", pairing,
                             "--judge-reviews", str(MLRBENCH / "agent_reviews"))  # fmt: skip
    response = download(client_for(admin_user), released_study, "json", f"?pairing={pairing}&bootstrap=0")
    app = json.loads(response.content)
    views = {"judges_mean": "judges_mean"} | {
        f"judge:{p}:{m}": f"judge:{m}"
        for p, m in (("anthropic", "claude-3-7-sonnet-20250219"), ("google", "gemini-2.5-pro-preview"))
    }
    assert app["views"] == sorted(views, key=lambda v: (v == "judges_mean", v))
    assert_same_statistics(app, per_judge, views)
    # The released llm_judge.csv (the judges' mean per paper) gives the same judges_mean view.
    means = file_command("--human", str(human), "--llm", str(llm), "--pairing", pairing)
    for crit in CRITERIA:
        mine = app["criteria"][crit]["views"]["judges_mean"]["mlrbench_mann_whitney_u"]
        theirs = means["criteria"][crit]["views"]["judges_mean"]["mlrbench_mann_whitney_u"]
        assert (mine["estimate"], mine["n"]) == (theirs["estimate"], theirs["n"])
        assert mine["p_value"] == pytest.approx(theirs["p_value"], rel=1e-12)
    if pairing == "mlrbench":
        novelty = app["criteria"]["Novelty"]["views"]["judges_mean"]["mlrbench_mann_whitney_u"]
        # 27 human-human differences (the published 24 lose three pairs to the repeated rows) and
        # 57 human-judge ones (the published 60 count the repeated rows).
        assert novelty["n"] == {"human_human": 27, "human_judge": 57}
        assert novelty["estimate"] == 749.0
