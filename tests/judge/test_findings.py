"""The findings page: MLR-Bench's published figures recomputed from the imported release, against the
released files read independently (shared data), and its parts on small hand-made data."""

from __future__ import annotations

import csv
import io
import json
import re
import statistics

import pytest
from django.urls import reverse

from benchmark.models import ResearchRun
from benchmark.research.imports import import_mlr_runs
from benchmark.research.writeups import import_writeups
from judge.findings import LIST_PRICES, PUBLISHED, costs, findings_compute, flags_vs_labels, price_of
from judge.mlr_reviews import import_mlr_reviews
from judge.models import Judgment
from review.io.hallucination import import_hallucination_labels
from tests.judge.factories import make_artifact, make_research_run, make_task, rubric, valid_reply
from tests.judge.test_mlr_reviews import SHARED, TASKS, needs_data

pytestmark = pytest.mark.django_db
LABELS = SHARED / "human_eval" / "Hallucination Check.csv"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#x27;", "'")


# --- on the released data ------------------------------------------------------------------------


@pytest.fixture
def release(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    for slug in TASKS:
        make_task(slug)
    import_mlr_runs(SHARED, stdout=io.StringIO())
    import_writeups(SHARED, stdout=io.StringIO())
    report = import_mlr_reviews(SHARED, stdout=io.StringIO())
    assert report.failed == 0 and not report.problems
    import_hallucination_labels(LABELS)


def _released_flags() -> dict[str, int]:
    """Each judge's has_hallucination count over Claude Code's experiments, read from the files themselves."""
    out = {}
    for judge_dir in sorted((SHARED / "agent_reviews").glob("subset_reviews_*")):
        files = sorted(judge_dir.glob("*/experiments/claude.json"))
        out[judge_dir.name.removeprefix("subset_reviews_")] = (
            sum(json.loads(f.read_text())["Hallucination"]["has_hallucination"] is True for f in files),
            len(files),
        )
    return out


def _released_costs() -> dict[str, float]:
    """Per backbone, the mean over runs of the trace's cost_usd plus every usage file at LIST_PRICES."""
    stage_model = {"idea": None, "proposal": None, "paper": None, "lit": "gpt-4o-search-preview-2025-03-11"}
    backbone_model = {"claude": "claude-3-7-sonnet-20250219", "gemini": "gemini-2.5-pro-preview-03-25",
                      "o4-mini": "o4-mini-2025-04-16"}  # fmt: skip
    out = {}
    for backbone, model in backbone_model.items():
        totals = []
        for run in sorted(p for p in (SHARED / "agent_results" / f"end2end_{backbone}").iterdir() if p.is_dir()):
            trace = json.loads((run / "claude_output.json").read_text())
            total = next(m["cost_usd"] for m in reversed(trace) if m.get("role") == "system" and "cost_usd" in m)
            for stage, fixed in stage_model.items():
                usage = json.loads((run / f"{stage}_token_usage.json").read_text())
                price = LIST_PRICES[fixed or model]
                tokens_in = usage.get("prompt_tokens") or sum(
                    usage.get(k, 0) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
                )
                tokens_out = usage.get("completion_tokens") or usage.get("output_tokens", 0)
                total += tokens_in * price["in"] / 1e6 + tokens_out * price["out"] / 1e6
            totals.append(total)
        out[backbone] = statistics.mean(totals)
    return out


@needs_data
def test_it_reproduces_the_papers_figures_from_the_release_and_says_which_source_gives_them(
    release, admin_user, client_for
):
    f = findings_compute()
    claude_code = next(b for b in f["experiment_flags"]["agents"] if b["agent"] == "claude")
    released = _released_flags()
    counts = {s["name"]: (s["count"]["flagged"], s["count"]["judged"]) for s in claude_code["sources"]}
    assert counts["claude-3-7-sonnet-20250219 judge"] == released["claude-3-7-sonnet-20250219"] == (1, 10)
    assert counts["gemini-2.5-pro-preview judge"] == released["gemini-2.5-pro-preview"] == (8, 10)
    assert (counts["either judge"], counts["both judges"]) == ((8, 10), (1, 10))
    # The paper's 8 of 10 is one judge's count (and, here, either judge's), never both judges'.
    assert claude_code["reproduced_by"] == ["gemini-2.5-pro-preview judge", "either judge"]

    judged = list(csv.DictReader((SHARED / "human_eval" / "llm_judge.csv").open()))
    for row in f["end_to_end"]["rows"]:
        release_mean = statistics.mean(float(r["Overall"]) for r in judged if r["model_name"] == row["backbone"])
        assert row["overall"].mean == pytest.approx(release_mean)
    e2e = {row["backbone"]: row for row in f["end_to_end"]["rows"]}
    assert e2e["claude"]["matches"] and e2e["o4-mini"]["matches"] and e2e["gemini"]["published"] is None
    assert round(e2e["claude"]["overall"].mean, 2) == PUBLISHED["overall_claude"]["value"] == 4.70

    by_backbone = {row["backbone"]: row for row in f["costs"]["rows"]}
    for backbone, total in _released_costs().items():
        assert by_backbone[backbone]["total"] == pytest.approx(total)
        assert by_backbone[backbone]["complete"] == 10
    assert (round(by_backbone["claude"]["total"], 2), round(by_backbone["o4-mini"]["total"], 2)) == (2.40, 1.15)
    # The coding agent alone is what the run pages showed (the issue's $2.17 / $1.07).
    assert (round(by_backbone["claude"]["agent_only"], 2), round(by_backbone["o4-mini"]["agent_only"], 2)) == (
        2.17,
        1.07,
    )

    ablation = {j["judge"]: {r["key"]: r for r in j["rows"]} for j in f["ablation"]["judges"]}
    for judge, rows in ablation.items():
        paired = []
        for task in sorted({i["task"] for j in f["ablation"]["judges"] for i in j["items"]}):
            folder = SHARED / "agent_reviews" / f"subset_reviews_{judge}" / task
            with_code = json.loads((folder / "review_o4-mini.json").read_text())
            without = json.loads((folder / "review_o4-mini_no_code.json").read_text())
            overall = lambda d: (d.get("Overall") or d["OverallAssessment"])["score"]  # noqa: E731
            paired.append(overall(without) - overall(with_code))
        assert rows["overall"]["n"] == 5 and rows["overall"]["difference"] == pytest.approx(statistics.mean(paired))

    html = _text(client_for(admin_user).get(reverse("judge:findings")).content.decode())
    assert "Reproduced by: gemini-2.5-pro-preview judge, either judge (8 of 10)" in html
    assert "$2.40 $2.40: matches" in html and "$1.15 $1.15: matches" in html
    assert "4.70: matches" in html and "3.95: matches" in html
    # Humans: 8 of 9 MLR Agent rows say faked results; the missing scope row is named, not read as No.
    assert 'says "faked experimental results" for 8 of 9 MLR Agent papers' in html
    assert "no MLR Agent row for iclr2025_scope" in html
    assert "Claude Code experiment · gemini-2.5-pro-preview flag 9 6 1 2 0 0.86 0.75" in html
    # Referee's audit of the papers the humans read: every Claude-backbone paper has a number found nowhere.
    audits = {a["backbone"]: a["count"] for a in f["paper_audits"]}
    assert audits["claude"] == {"flagged": 10, "judged": 10, "missing": 0}
    assert "end-to-end claude paper · Referee audit 9 8 1 0 0 0.89 1.00" in html


# --- on small data ---------------------------------------------------------------------------------


def test_it_scores_flags_against_labels_leaving_out_not_sure_and_missing_tasks():
    flags = {"a": True, "b": True, "c": False, "d": False, "e": True, "f": None}
    labels = {"a": "yes", "b": "no", "c": "yes", "d": "no", "e": "not_sure", "f": "yes", "g": "yes"}
    result = flags_vs_labels(flags, labels)
    assert (result["tp"], result["fp"], result["fn"], result["tn"], result["n"]) == (1, 1, 1, 1, 4)
    assert result["precision"] == 0.5 and result["recall"] == 0.5
    assert result["left_out"] == ["e", "f", "g"]
    none = flags_vs_labels({"a": False}, {"a": "no"})
    assert none["precision"] is None and none["recall"] is None  # nothing flagged, no Yes: no ratio made up


def test_it_prices_known_models_by_their_release_labels_and_nothing_else():
    assert price_of("google/gemini-2.5-pro-preview")["model"] == "gemini-2.5-pro-preview-03-25"
    assert price_of("anthropic:claude-3-7-sonnet-20250219")["in"] == 3.00
    assert price_of("o4-mini")["out"] == 4.40
    assert price_of("deepseek-r1") is None and price_of("") is None


def test_it_leaves_a_run_with_an_unpriced_stage_out_of_the_total_and_says_why(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    task = make_task("iclr2025_alpha")
    priced = make_research_run(task=task, backbone="o4-mini", source=ResearchRun.Source.MLRBENCH,
                               settings={"model": "o4-mini-2025-04-16"})  # fmt: skip
    make_artifact(priced, "idea", tokens_sent=1_000_000, tokens_received=1_000_000)
    make_artifact(priced, "experiment", cost=1.0, data={"priced": True, "agent": {"name": "Claude Code"}})
    odd = make_research_run(task=make_task("iclr2025_beta"), backbone="o4-mini", source=ResearchRun.Source.MLRBENCH,
                            settings={"model": "o4-mini-2025-04-16"})  # fmt: skip
    make_artifact(odd, "idea", tokens_sent=10, tokens_received=10)
    make_artifact(odd, "experiment", data={"priced": False, "cost_note": "unpriced: no cost for codex"})
    gemini = make_research_run(task=task, backbone="gemini", source=ResearchRun.Source.MLRBENCH,
                               settings={"model": "google/gemini-2.5-pro-preview"})  # fmt: skip
    make_artifact(gemini, "paper", tokens_sent=250_000, tokens_received=10)
    make_artifact(gemini, "experiment", cost=2.0, data={"priced": True})

    rows = {row["backbone"]: row for row in costs()["rows"]}
    assert rows["o4-mini"]["complete"] == 1 and rows["o4-mini"]["runs"] == 2
    assert rows["o4-mini"]["total"] == pytest.approx(1.0 + 1.10 + 4.40)  # the fully priced run only
    assert rows["o4-mini"]["agent_only"] == pytest.approx(1.0)
    experiment = next(s for s in rows["o4-mini"]["stages"] if s["stage"] == "experiment")
    assert experiment["priced"] == 1 and experiment["unpriced"] == ["unpriced: no cost for codex"]
    paper = next(s for s in rows["gemini"]["stages"] if s["stage"] == "paper")
    assert paper["mean"] is None and "above the 200000 tier" in paper["unpriced"][0]  # never guessed
    assert rows["gemini"]["total"] is None and not rows["gemini"]["matches"]


def _experiment(task, flags: dict[str, int]):
    run = make_research_run(task=task, backbone="codex", source=ResearchRun.Source.STEPWISE, stages=["experiment"])
    experiment = make_artifact(run, "experiment", "## Results\n\nAccuracy 0.91 on the test split.\n")
    r = rubric("experiment")
    for judge, flag in flags.items():
        Judgment.objects.create(artifact=experiment, rubric=r, judge_model=judge, status=Judgment.Status.SUCCEEDED,
                                source=Judgment.Source.MLRBENCH,
                                scores=json.loads(valid_reply(r, hallucination=flag)))  # fmt: skip
    return experiment


def test_it_counts_each_judges_flags_per_coding_agent_and_the_audit_flags_unbacked_numbers(
    settings, tmp_path, researcher, client_for
):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    _experiment(make_task("iclr2025_alpha"), {"a:judge-1": 1, "b:judge-2": 1})
    _experiment(make_task("iclr2025_beta"), {"a:judge-1": 0, "b:judge-2": 1})
    _experiment(make_task("iclr2025_gamma"), {"a:judge-1": 0})
    f = findings_compute()
    block = f["experiment_flags"]["agents"][0]
    assert block["agent"] == "codex" and block["published"] is None  # the paper's figure is Claude Code's
    counts = {s["name"]: s["count"] for s in block["sources"]}
    assert counts["judge-1 judge"] == {"flagged": 1, "judged": 3, "missing": 0}
    assert counts["judge-2 judge"] == {"flagged": 2, "judged": 2, "missing": 1}  # a missing review is not a "no"
    assert counts["both judges"] == {"flagged": 1, "judged": 2, "missing": 1}
    assert counts["either judge"]["flagged"] == 2
    # No execution evidence stored: the report's 0.91 is found nowhere, so every experiment is flagged.
    assert counts["Referee's fabrication audit"] == {"flagged": 3, "judged": 3, "missing": 0}
    download = client_for(researcher).get(reverse("judge:findings_json"))
    assert download["Content-Disposition"] == 'attachment; filename="mlrbench-findings.json"'
    data = json.loads(download.content)
    assert data["experiment_flags"]["agents"][0]["per_judge"] == block["per_judge"]
    assert data["attribution"].startswith("Figures computed from MLR-Bench's released data")


def test_it_never_counts_a_judgment_made_on_referee_or_of_an_owners_run(settings, tmp_path, researcher):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    experiment = _experiment(make_task("iclr2025_alpha"), {"a:judge-1": 1})
    r = rubric("experiment")
    reply = json.loads(valid_reply(r, hallucination=1))
    # A Referee judgment of the released experiment: not the release's review, so not the paper's finding.
    Judgment.objects.create(artifact=experiment, rubric=r, judge_model="c:judge-3", scores=reply,
                            status=Judgment.Status.SUCCEEDED)  # fmt: skip
    # A researcher's own run, even with a judgment marked as imported: never on a page every researcher reads.
    own = make_research_run(task=make_task("iclr2025_beta"), backbone="codex", owner=researcher,
                            source=ResearchRun.Source.STEPWISE, stages=["experiment"])  # fmt: skip
    mine = make_artifact(own, "experiment", "## Results\n\nAccuracy 0.5.\n")
    Judgment.objects.create(artifact=mine, rubric=r, judge_model="a:judge-1", scores=reply,
                            status=Judgment.Status.SUCCEEDED, source=Judgment.Source.MLRBENCH)  # fmt: skip
    block = findings_compute()["experiment_flags"]
    assert block["judge_names"] == ["judge-1"]


def test_it_says_what_is_missing_when_nothing_is_imported(admin_user, client_for):
    html = _text(client_for(admin_user).get(reverse("judge:findings")).content.decode())
    assert "No stepwise experiment is imported" in html and "No human hallucination labels imported" in html
    assert "No no-code reviews imported" in html


@pytest.mark.parametrize("name", ["judge:findings", "judge:findings_json"])
def test_it_shows_findings_to_researchers_and_admins_only(name, admin_user, researcher, reviewer, client_for):
    url = reverse(name)
    assert client_for(admin_user).get(url).status_code == 200
    assert client_for(researcher).get(url).status_code == 200
    assert client_for(reviewer).get(url).status_code == 403  # judges' scores next to model names
    anonymous = client_for(None).get(url)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert client_for(researcher).post(url).status_code == 405


def test_a_researcher_who_also_reviews_is_refused(researcher, client_for):
    from django.contrib.auth.models import Group

    researcher.groups.add(Group.objects.get_or_create(name="reviewer")[0])
    assert client_for(researcher).get(reverse("judge:findings")).status_code == 403


@needs_data
def test_make_up_links_the_mlr_agent_labels_only_to_the_backbone_the_settings_name(settings):
    from review import demo
    from review.models import HallucinationLabel
    from tests.judge.test_mlr_reviews import _released_papers

    settings.MLRBENCH_DIR = str(SHARED)
    rubric("end2end")  # the study campaign needs the end-to-end rubric
    papers = _released_papers()
    mlr_agent = HallucinationLabel.objects.filter(system="MLR Agent")
    settings.MLRBENCH_LABELS_BACKBONE = ""
    out = io.StringIO()
    demo.seed(stdout=out)
    assert mlr_agent.count() == 36 and not mlr_agent.exclude(artifact=None).exists()
    assert "MLRBENCH_LABELS_BACKBONE" in out.getvalue()  # says how to link them
    settings.MLRBENCH_LABELS_BACKBONE = "o4-mini"
    demo.seed(stdout=io.StringIO())
    linked = mlr_agent.exclude(artifact=None)
    assert linked.count() == 36  # 9 rows x 4 kinds; iclr2025_scope has no MLR Agent row
    assert {label.artifact_id for label in linked} == {papers[(label.workshop, "o4-mini")].pk for label in linked}
    settings.MLRBENCH_LABELS_BACKBONE = ""
    demo.seed(stdout=io.StringIO())  # a later make up without the setting keeps the links
    assert mlr_agent.exclude(artifact=None).count() == 36
