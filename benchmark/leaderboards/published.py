"""MLGym's published AUP table, and how a leaderboard compares with it.

MLGym's leaderboard ranks 12 models (mlgym_results.PUBLISHED_MODELS) and the baseline over the 13
MLGym-Bench tasks, AUP for best attempt and best submission, with tau_max = 1.5. Two rows of the
12-model table (revised paper, OpenReview https://openreview.net/pdf?id=ryTr83DxRq) are found in
a public survey that quotes them; for the other rows no stored copy of the paper could be found,
so their reference is MLGym's published computation (../shared/mlgym/README.md, "as its
repository's leaderboard is computed") applied to its released results.json by
`manage.py aup --results` (benchmark.leaderboards.mlgym_results), said so per row wherever they
are shown. The page shows each figure beside Referee's and explains any difference.

No Django: the page, the tests and bench/aup.py read the same table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmark.leaderboards.mlgym_results import MLGYM_TASKS, PUBLISHED_MODELS
from benchmark.leaderboards.scoring import BASELINE

PAPER = "paper"
RELEASE = "release"
SOURCES = {
    PAPER: "MLGym's paper (revised version, OpenReview ryTr83DxRq), as quoted by a public survey",
    RELEASE: "MLGym's published AUP method applied to its released results.json (manage.py aup --results); "
    "the paper's row was not found in a stored source",
}
PUBLISHED_TAU_MAX = 1.5


@dataclass(frozen=True)
class Row:
    best_attempt: float
    best_submission: float
    source: str


PUBLISHED_AUP: dict[str, Row] = {
    "gemini-25-pro": Row(1.419, 1.445, PAPER),
    "claude-37-sonnet": Row(1.350, 1.378, PAPER),
    "claude-35-sonnet-new": Row(1.426, 1.419, RELEASE),
    "gpt-o1": Row(1.423, 1.444, RELEASE),
    "gemini-15-pro": Row(1.420, 1.405, RELEASE),
    "gemini-20-flash-thinking": Row(1.374, 1.385, RELEASE),
    "llama3-405b-tools": Row(1.330, 1.353, RELEASE),
    "llama4-17b-128": Row(1.303, 1.330, RELEASE),
    "gpt4o2": Row(1.288, 1.317, RELEASE),
    "llama4-17b-16": Row(1.267, 1.288, RELEASE),
    "deepseek-r1": Row(1.249, 1.267, RELEASE),
    BASELINE: Row(1.220, 1.243, RELEASE),
    "gpt-o3-mini": Row(1.214, 1.236, RELEASE),
}
# Runs MLGym ranks: 12 models x 13 tasks x 4 runs.
PUBLISHED_RUNS = len(PUBLISHED_MODELS) * len(MLGYM_TASKS) * 4


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def published_comparison(
    data: Mapping[str, Any], *, runs: Sequence[Mapping[str, Any]], research: bool = False, grouped: bool = False
) -> dict[str, Any] | None:
    """Referee's table beside MLGym's published one, when `data` (tables.page_data) ranks MLGym's
    method set over MLGym-Bench's tasks; None for any other board (AUP depends on the method set).

    Each row: the published figures, where they come from, and whether Referee's round to them;
    `explanations` say what makes this board differ from MLGym's when something does."""
    if grouped or set(data["methods"]) != {*PUBLISHED_MODELS, BASELINE} or set(data["tasks"]) != set(MLGYM_TASKS):
        return None
    rows = {}
    for method, published in PUBLISHED_AUP.items():
        ours = data["aup"][method]
        got = (_rounded(ours["best_attempt"]), _rounded(ours["best_submission"]))
        rows[method] = {
            "best_attempt": published.best_attempt,
            "best_submission": published.best_submission,
            "source": published.source,
            "match": got == (published.best_attempt, published.best_submission),
        }
    explanations = []
    referee = sum(1 for run in runs if run["source"] != "mlgym")
    if referee:
        explanations.append(
            f"{referee} Referee run(s) are ranked with MLGym's released ones: choose “imported from MLGym only” "
            "to compare MLGym's runs alone."
        )
    imported = len(runs) - referee
    if imported != PUBLISHED_RUNS:
        explanations.append(
            f"{imported} released runs are ranked where MLGym ranks {PUBLISHED_RUNS} "
            "(12 models x 13 tasks x 4 runs): a run set or a partial import leaves some out, or adds some."
        )
    computed = sorted(t for t, c in data.get("columns", {}).items() if c.get("baseline_source") != "imported")
    if computed:
        explanations.append(
            f"The baseline of {', '.join(computed)} is not MLGym's released one (no imported baseline): "
            "feasibility and the baseline row differ from MLGym's."
        )
    if research:
        explanations.append("Research-pipeline experiments are included.")
    tau_max = data["tau_max"]
    matches = all(row["match"] for row in rows.values()) and tau_max == PUBLISHED_TAU_MAX
    if not matches and not explanations:
        explanations.append(
            "The same runs and baselines as MLGym's give different figures: a scoring difference (please report it)."
        )
    return {
        "tau_max": PUBLISHED_TAU_MAX,
        "tau_max_match": tau_max == PUBLISHED_TAU_MAX,
        "rows": rows,
        "matches": matches,
        "sources": SOURCES,
        "explanations": explanations,
    }


def published_filter() -> dict[str, Any]:
    """The leaderboard filter that shows MLGym's published comparison: its 12 models, its releases."""
    return {"methods": list(PUBLISHED_MODELS), "source": "mlgym"}
