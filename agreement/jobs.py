"""RQ jobs of the agreement side of the judge lab (queue `default`): thin, take ids, call one service."""

from __future__ import annotations

from typing import Any

from agreement.cache import statistics_compute
from agreement.lab.services import comparison_execute
from review.models import JudgeComparison


def run_comparison(comparison_id: int) -> str:
    comparison = (
        JudgeComparison.objects.select_related(
            "baseline__config__rubric", "candidate__config__rubric", "baseline__gold_set"
        )
        .filter(pk=comparison_id)
        .first()
    )
    if comparison is None:
        return "gone"
    return comparison_execute(comparison=comparison).status


def compute_statistics(*, key: str, task: str, params: dict[str, Any]) -> str:
    """A judge lab page's statistics, computed once for `key` (cache.cached_or_queued queued it)."""
    statistics_compute(key=key, task=task, kwargs=params)
    return "stored"
