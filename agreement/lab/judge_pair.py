"""How far MLR-Bench's two judges agree on the stepwise ideas and proposals (2 x 2,412 reviews).

The scores come from the judge layer's score matrix (judge.leaderboard.stepwise_matrix); every
statistic from raters.py. Results are cached per (stage, rubric version, judgments' state,
settings) in the agreement cache, like a campaign's analysis: the state is a handful of aggregates,
so a cached page costs two small queries.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from typing import Any

from django.db.models import Count, Max, Sum

from agreement.cache import _get, _set, computed
from agreement.report.exports import clean_json
from agreement.stats.raters import two_rater_analysis
from benchmark.csv_tables import CsvDictWriter
from judge.leaderboard import default_rubric, stepwise_judgments, stepwise_matrix, stepwise_rubrics
from judge.models import Rubric


class JudgePairError(ValueError):
    """Nothing to compare: no judgments, or fewer than two judges."""


def _state(stage: str, rubric: Rubric) -> str:
    """Per status: count, id sum, latest finish and creation (one query: a cached page's cost)."""
    statuses = sorted(
        stepwise_judgments(stage, rubric)
        .values_list("status")
        .annotate(n=Count("id"), ids=Sum("id"), done=Max("finished_at"), made=Max("created_at"))
    )
    return hashlib.sha256(json.dumps([rubric.pk, statuses], default=str).encode()).hexdigest()[:24]


def judge_pair_analysis(*, stage: str, rubric: Rubric | None = None, n_boot: int = 1000, seed: int = 0,
                        threshold: float = 6.0) -> dict[str, Any]:  # fmt: skip
    """Judge A vs judge B on every stepwise item of `stage` (cached while the judgments are unchanged)."""
    rubric = rubric or default_rubric(stage)
    if rubric is None:
        raise JudgePairError(f"no judgments of stepwise {stage}s: import them with manage.py import_mlr_stepwise")
    key = f"judge_pair:{stage}:{_state(stage, rubric)}:{n_boot}:{seed}:{threshold}"
    cached = _get(key)
    if cached is not None:
        return cached
    computed["judge_pair"] += 1
    m = stepwise_matrix(stage, rubric)
    if len(m.judges) < 2:
        raise JudgePairError(f"stepwise {stage}s have {len(m.judges)} judge(s): two are needed")
    extra = m.judges[2:]
    result = two_rater_analysis(
        a=m.S[:, 0, :],
        b=m.S[:, 1, :],
        raters=(m.judges[0], m.judges[1]),
        criteria=[name for _, name in m.criteria],
        scales=m.scales,
        systems=m.models,
        n_boot=n_boot,
        seed=seed,
        threshold=threshold,
        meta={
            "stage": stage,
            "rubric": f"{rubric} ({rubric.code})",
            "judges": m.judges,
            "items": len(m.artifact_ids),
            "data": "MLR-Bench stepwise results (agent_reviews/idea_proposal_reviews_<judge>/)",
            "other_judges_not_compared": extra,
        },
    )
    _set(key, result)
    return result


def rubric_options(stage: str) -> list[Rubric]:
    return stepwise_rubrics(stage)


def to_csv(result: dict[str, Any]) -> str:
    out = io.StringIO()
    fields = ["stage", "criterion", "statistic", "estimate", "ci_low", "ci_high", "p_value", "p_holm", "n", "note"]
    writer = CsvDictWriter(out, fieldnames=fields)
    writer.writeheader()
    for crit, stats in result["criteria"].items():
        for key, r in stats.items():
            writer.writerow(
                {
                    "stage": result["meta"].get("stage", ""),
                    "criterion": crit,
                    "statistic": key,
                    **{f: ("" if isinstance(r[f], float) and math.isnan(r[f]) else r[f]) for f in fields[3:8]},
                    "n": json.dumps(r["n"]),
                    "note": r["note"],
                }
            )
    return out.getvalue()


def to_json(result: dict[str, Any]) -> str:
    return json.dumps(clean_json(result), indent=1)
