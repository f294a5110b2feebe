"""Flags against human labels, in the decision view: the judges' hallucination flags against the
human hallucination check, and the fabrication audit's flags against the humans' "faked results".

- Human truth per paper and kind: Yes = 1, No = 0; Not Sure is left out (and counted). "Any kind"
  is 1 when any kind is Yes, 0 when all four are No.
- A judge's flags: the hallucination audit rubric's typed findings (a finding of a kind flags that
  kind) in the judge's latest succeeded judgment of the paper; and the experiment rubric's
  hallucination flag (1 = yes) on the run's experiment, read as "faked results" and "any kind".
- The fabrication audit flags a paper when at least `min_flags` of its numbers are found nowhere.

Each comparison is the decision view of decision.py at threshold 0.5 on the 0/1 values: accuracy,
precision, recall, F1, false positive and false negative rates and the confusion matrix.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from agreement.stats.decision import decision
from benchmark.models import Artifact
from benchmark.research.fabrication import stored_audit
from judge.models import Judgment
from review.io.hallucination import missing_rows
from review.models import HallucinationLabel

KINDS = [k.value for k in HallucinationLabel.Kind]
ANY = "any"


def _truth() -> tuple[dict[int, dict[str, float]], dict[str, Any]]:
    """paper id -> kind -> 1/0 (Not Sure left out), and the coverage of the labels."""
    labels = list(HallucinationLabel.objects.values_list("system", "workshop", "kind", "value", "artifact_id"))
    truth: dict[int, dict[str, float]] = defaultdict(dict)
    not_sure = 0
    for _system, _workshop, kind, value, artifact_id in labels:
        if artifact_id is None:
            continue
        if value == HallucinationLabel.Value.NOT_SURE:
            not_sure += 1
            continue
        truth[artifact_id][kind] = 1.0 if value == HallucinationLabel.Value.YES else 0.0
    for kinds in truth.values():
        if any(v == 1.0 for v in kinds.values()):
            kinds[ANY] = 1.0
        elif len(kinds) == len(KINDS):
            kinds[ANY] = 0.0
    systems = sorted({s for s, *_ in labels})
    coverage = {
        "labels": len(labels),
        "linked": sum(1 for *_, a in labels if a is not None),
        "unlinked": sum(1 for *_, a in labels if a is None),
        "not_sure": not_sure,
        "papers": len(truth),
        "systems": systems,
        "unlinked_by_system": {s: sum(1 for x, *_, a in labels if x == s and a is None) for s in systems},
        "faults": missing_rows(sorted({(s, w) for s, w, *_ in labels})),
    }
    return dict(truth), coverage


def _latest_first(artifacts: list[int], rubric_stage: str, field: str) -> Any:
    """(artifact, judge model, field) of the items' own succeeded judgments, each judge's latest first."""
    return (
        Judgment.objects.filter(
            artifact_id__in=artifacts, rubric__stage=rubric_stage, status=Judgment.Status.SUCCEEDED,
            experiment__isnull=True,
        )
        .order_by("artifact_id", "judge_model", "-created_at", "-id")
        .values_list("artifact_id", "judge_model", field)
    )  # fmt: skip


def _judge_flags(papers: list[int]) -> dict[str, dict[int, dict[str, float]]]:
    """source ('<judge> · hallucination audit' / '<judge> · experiment flag') -> paper -> kind -> 0/1."""
    out: dict[str, dict[int, dict[str, float]]] = defaultdict(dict)
    for artifact_id, model, findings in _latest_first(papers, "hallucination", "findings"):
        source = f"{model} · hallucination audit"
        if artifact_id in out[source]:
            continue  # the latest judgment only
        found = {str(f.get("type")) for f in findings or [] if isinstance(f, dict)}
        flags = {k: float(k in found) for k in KINDS}
        flags[ANY] = float(bool(found & set(KINDS)))
        out[source][artifact_id] = flags
    run_of = dict(Artifact.objects.filter(pk__in=papers).values_list("pk", "research_run_id"))
    experiments = dict(
        Artifact.objects.filter(research_run_id__in=run_of.values(), stage=Artifact.Stage.EXPERIMENT).values_list(
            "research_run_id", "pk"
        )
    )
    paper_of = {experiments[r]: p for p, r in run_of.items() if r in experiments}
    for artifact_id, model, scores in _latest_first(list(paper_of), "experiment", "scores"):
        source = f"{model} · experiment flag"
        paper = paper_of[artifact_id]
        value = ((scores or {}).get("hallucination") or {}).get("score")
        if paper in out[source] or not isinstance(value, int | float):
            continue
        out[source][paper] = {"faked_results": float(value >= 1), ANY: float(value >= 1)}
    return dict(out)


def _decide(truth: dict[int, dict[str, float]], pred: dict[int, dict[str, float]], kind: str) -> dict[str, Any]:
    papers = sorted(p for p in truth if kind in truth[p] and kind in pred.get(p, {}))
    t = np.array([truth[p][kind] for p in papers], dtype=float)
    y = np.array([pred[p][kind] for p in papers], dtype=float)
    rec = decision(t, y, 0.5)
    rec["extra"]["reading"] = "truth = the humans' Yes; predicted = flagged; estimate = accuracy"
    return rec


def hallucination_comparison() -> dict[str, Any]:
    truth, coverage = _truth()
    sources = _judge_flags(sorted(truth))
    table: dict[str, dict[str, Any]] = {}
    for source, pred in sorted(sources.items()):
        kinds = [*KINDS, ANY] if "audit" in source else ["faked_results", ANY]
        table[source] = {kind: _decide(truth, pred, kind) for kind in kinds}
    return {
        "coverage": coverage,
        "sources": table,
        "note": "" if table else "no judge has flagged these papers yet: request hallucination-audit judgments of them",
    }


def fabrication_comparison(*, min_flags: int = 1) -> dict[str, Any]:
    """The audit's flags against the humans' faked-results labels, with the per-paper table."""
    labels = HallucinationLabel.objects.filter(kind=HallucinationLabel.Kind.FAKED_RESULTS, artifact__isnull=False)
    rows = []
    truth, pred = {}, {}
    for label in labels.select_related("artifact__research_run__task").order_by("workshop"):
        audit = stored_audit(label.artifact)
        row = {
            "paper": str(label.artifact.code),
            "run": str(label.artifact.research_run.code),
            "task": label.workshop,
            "backbone": label.artifact.research_run.backbone,
            "human": label.value,
            "audited": audit is not None,
            "claims": audit["claims"] if audit else None,
            "flagged": audit["flagged"] if audit else None,
        }
        rows.append(row)
        row["note"] = (audit or {}).get("note", "")
        if audit is None or not audit["claims"] or label.value == HallucinationLabel.Value.NOT_SURE:
            continue  # not audited, nothing to audit (no results numbers), or no human verdict
        truth[label.artifact_id] = {"faked_results": float(label.value == HallucinationLabel.Value.YES)}
        pred[label.artifact_id] = {"faked_results": float(audit["flagged"] >= min_flags)}
    return {
        "min_flags": min_flags,
        "decision": _decide(truth, pred, "faked_results"),
        "papers": rows,
        "not_audited": sum(1 for r in rows if not r["audited"]),
        "nothing_to_audit": sum(1 for r in rows if r["audited"] and not r["claims"]),
        "reading": f"the audit flags a paper when {min_flags} or more of its results numbers are found nowhere",
    }
