"""`manage.py agreement` on the released MLR-Bench human_eval files."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "mlrbench"
if not SHARED.is_dir():  # helper worktrees sit one level deeper than the main checkout
    SHARED = Path("/work/shared/mlrbench")
HUMAN = SHARED / "human_eval" / "human_review.csv"
LLM = SHARED / "human_eval" / "llm_judge.csv"

# Published by the MLR-Bench authors: chchenhui/mlrbench, human_eval/
# compute_agreement_score.ipynb, cell 9 output (commit 1d3b189): two-sided Mann-Whitney U of
# |human-human| (n=24) vs |human-LLM| (n=60) differences. criterion: (U, p).
PUBLISHED = {
    "Novelty": (662.5, 0.568827),
    "Clarity": (525.5, 0.052853),
    "Soundness": (630.5, 0.372652),
    "Significance": (603.0, 0.241145),
    "Overall": (692.0, 0.782697),
}

pytestmark = pytest.mark.shared_data(HUMAN, LLM)


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("agreement", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_reproduces_the_published_mlrbench_test_with_mlrbench_pairing() -> None:
    out, _ = run("--human", str(HUMAN), "--llm", str(LLM), "--pairing", "mlrbench",
                 "--format", "json", "--bootstrap", "0")  # fmt: skip
    result = json.loads(out)
    assert result["pairing"]["policy"] == "mlrbench"
    for crit, (u, p) in PUBLISHED.items():
        rec = result["criteria"][crit]["views"]["judges_mean"]["mlrbench_mann_whitney_u"]
        assert rec["estimate"] == pytest.approx(u)
        assert rec["p_value"] == pytest.approx(p, abs=1e-6)
        assert rec["n"] == {"human_human": 24, "human_judge": 60}
        assert -1 <= rec["extra"]["rank_biserial"] <= 1


def test_it_defaults_to_strict_and_lists_the_data_faults() -> None:
    out, _ = run("--human", str(HUMAN), "--llm", str(LLM), "--bootstrap", "0")
    assert out.startswith("pairing: strict  items: 24")
    assert out.count("[duplicate_review]") == 3
    assert out.count("[single_review]") == 6
    assert "human_review.csv:9, human_review.csv:10" in out
    assert "rule: strict:" in out


def test_it_adds_per_judge_views_from_the_judges_own_reviews() -> None:
    out, _ = run("--human", str(HUMAN), "--llm", str(LLM), "--format", "json", "--bootstrap",
                 "0", "--judge-reviews", str(SHARED / "agent_reviews"))  # fmt: skip
    result = json.loads(out)
    assert result["views"] == [
        "judge:claude-3-7-sonnet-20250219",
        "judge:gemini-2.5-pro-preview",
        "judges_mean",
    ]
    # the released llm_judge.csv is exactly the mean of the two judges' files
    assert not [f for f in result["faults"] if f["kind"] == "judge_mean_mismatch"]


def test_it_writes_a_self_contained_report_with_csv_and_json(tmp_path: Path) -> None:
    report = tmp_path / "out" / "agreement.html"
    _, err = run("--human", str(HUMAN), "--llm", str(LLM), "--report", str(report),
                 "--bootstrap", "200", "--rubric-version", "end2end-v1",
                 "--judge-model", "claude-3-7-sonnet-20250219", "--prompt-hash", "abc123")  # fmt: skip
    page = report.read_text()
    assert "plotly.js v" in page  # the bundle itself is inlined
    head, bundle_and_rest = page.split("<script>", 1)
    rest = bundle_and_rest.split("</script>", 1)[1]
    # outside the bundle (which names CDNs for map features we do not use) nothing is fetched
    assert "http" not in head + rest and "<script src=" not in page and "<link" not in page
    assert page.count('<div class="chart" id="agreement-chart-') == 20  # 4 charts x 5 criteria
    assert 'id="agreement-charts"' in page and "Plotly.newPlot" in page
    for pinned in (
        "end2end-v1",
        "claude-3-7-sonnet-20250219",
        "abc123",
        "strict",
        "@media print",
    ):
        assert pinned in page
    data = json.loads(report.with_suffix(".json").read_text())  # strict JSON: no NaN
    assert data["settings"]["bootstrap_resamples"] == 200
    assert data["meta"]["prompt_hashes"] == ["abc123"]
    lines = report.with_suffix(".csv").read_text().splitlines()
    [provenance] = next(csv.reader(lines[:1]))  # one quoted cell (benchmark.csv_tables: no stray cells)
    assert provenance.startswith("# pairing=strict")
    rows = list(csv.DictReader(lines[1:]))
    assert {r["criterion"] for r in rows} == set(PUBLISHED)
    mad = [r for r in rows if r["key"] == "mad_judge_human_mean"]
    assert len(mad) == 5 and all("bootstrap percentile, B=200" in r["ci_method"] for r in mad)
    assert "agreement.csv" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--human", "/nonexistent/h.csv", "--llm", str(LLM)],
            "/nonexistent/h.csv: file not found",
        ),
        (["--human", str(LLM), "--llm", str(LLM)], "missing column(s) reviewer_id"),
        (["--human", str(HUMAN), "--llm", str(LLM), "--margin", "0"], "--margin"),
        (
            ["--human", str(HUMAN), "--llm", str(LLM), "--bootstrap", "-1"],
            "--bootstrap",
        ),
    ],
)
def test_it_refuses_bad_input_with_a_clear_error(args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run(*args)


@pytest.mark.browser
def test_it_draws_every_chart_offline_and_prints_to_pdf(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    report = tmp_path / "agreement.html"
    run("--human", str(HUMAN), "--llm", str(LLM), "--bootstrap", "0", "--report", str(report))
    requests: list[str] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(report.as_uri())
            page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length === 20")
            pdf = page.pdf()
        finally:
            browser.close()
    assert errors == []
    assert [u for u in requests if not u.startswith("file:")] == []  # nothing fetched
    assert pdf.startswith(b"%PDF") and len(pdf) > 50_000


def test_it_gives_the_verdict_and_the_new_statistics_in_json() -> None:
    out, _ = run("--human", str(HUMAN), "--llm", str(LLM), "--format", "json", "--bootstrap", "0",
                 "--judge-reviews", str(SHARED / "agent_reviews"))  # fmt: skip
    result = json.loads(out)
    verdict = result["verdict"]
    assert verdict["rule_version"].startswith("verdict rule v2") and len(verdict["rule"]) == 7
    views = result["views"]
    assert len(verdict["cells"]) == len(views) * 5
    for crit, block in result["criteria"].items():
        for view in views:
            stats = block["views"][view]
            for key in ("alt_test", "kappa_linear", "kappa_quadratic", "percent_agreement", "auroc",
                        "decision_at_threshold", "human_likeness_z", "gwet_ac2_with_judge", "pearson", "rmse"):  # fmt: skip
                assert key in stats, (crit, view, key)
            # 24 papers, each reviewer with far fewer: the alt-test says it cannot run.
            assert stats["alt_test"]["estimate"] is None
            assert "needs at least 30 items per reviewer" in stats["alt_test"]["note"]
            assert -1 <= stats["kappa_quadratic"]["estimate"] <= 1
            assert stats["decision_at_threshold"]["extra"]["threshold"] == 6.0
        assert {"fleiss_kappa", "gwet_ac2", "kappa_quadratic_human_human"} <= set(block["humans"])
    cell = verdict["cells"][0]
    assert cell["anchor"] == "evidence-0-0"
    # The released study is small, and the verdict still answers every cell, naming the test that decided.
    assert all(c["verdict"] != "not shown" for c in verdict["cells"])
    assert {c["test"] for c in verdict["cells"]} == {"combined-annotator Wilcoxon alt-test + TOST (item bootstrap)"}
    assert any("more items would decide it" in c["reason"] for c in verdict["cells"])


def test_it_takes_the_threshold_and_epsilon() -> None:
    base = json.loads(run("--human", str(HUMAN), "--llm", str(LLM), "--format", "json", "--bootstrap", "0")[0])
    out, _ = run("--human", str(HUMAN), "--llm", str(LLM), "--format", "json", "--bootstrap", "0",
                 "--threshold", "5", "--epsilon", "0.2", "--min-items", "5")  # fmt: skip
    result = json.loads(out)
    assert result["settings"]["decision_threshold"] == 5.0 and result["settings"]["alt_test_epsilon"] == 0.2
    a = base["criteria"]["Overall"]["views"]["judges_mean"]
    b = result["criteria"]["Overall"]["views"]["judges_mean"]
    assert a["decision_at_threshold"]["n"] != b["decision_at_threshold"]["n"]  # another accept line
    assert b["alt_test"]["extra"]["epsilon"] == 0.2 and b["alt_test"]["n"]["reviewers_tested"] > 0
    with pytest.raises(CommandError, match="--epsilon must be between 0 and 0.5"):
        run("--human", str(HUMAN), "--llm", str(LLM), "--epsilon", "2")


def test_it_prints_the_verdict_first_in_the_table() -> None:
    out, _ = run("--human", str(HUMAN), "--llm", str(LLM), "--bootstrap", "0")
    lines = out.splitlines()
    assert lines[2].startswith("verdict (verdict rule v2")
    assert lines[3].lstrip().startswith("Novelty / judges_mean") and "not shown" not in lines[3]
