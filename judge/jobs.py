"""RQ jobs of the judge app (queue `judge`): thin, take ids, call one service."""

from __future__ import annotations

from judge.models import Judgment
from judge.services import judgment_execute


def run_judgment(judgment_id: int) -> str:
    judgment = Judgment.objects.select_related("artifact__research_run__task", "rubric").filter(pk=judgment_id).first()
    if judgment is None:  # deleted with its artifact while queued
        return "gone"
    return judgment_execute(judgment=judgment).status
