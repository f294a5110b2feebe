"""The humans' hallucination labels beside the flags of judge/findings.py (the findings page pulls this
section through a tag: labels live in the review app, above judge)."""

from __future__ import annotations

from typing import Any

from django import template

from judge.findings import flag_sources, flags_vs_labels
from review.io.hallucination import MLR_AGENT
from review.models import HallucinationLabel

register = template.Library()


@register.inclusion_tag("review/_findings_humans.html")
def humans_vs_flags(findings: dict[str, Any]) -> dict[str, Any]:
    """Precision and recall of each flag source for the humans' "faked experimental results" of MLR Agent,
    matched by task (the humans checked MLR Agent's paper of the task, the judges its stepwise experiment)."""
    rows = HallucinationLabel.objects.filter(system=MLR_AGENT, kind=HallucinationLabel.Kind.FAKED_RESULTS)
    labels = {r.workshop: r.value for r in rows}
    backbones = sorted(
        {b for b in rows.exclude(artifact=None).values_list("artifact__research_run__backbone", flat=True)}
    )
    flags = findings["experiment_flags"]
    tasks = sorted({r["task"] for block in flags["agents"] for r in block["tasks"]})
    return {
        "labels": labels,
        "yes": sum(v == HallucinationLabel.Value.YES for v in labels.values()),
        "not_sure": sum(v == HallucinationLabel.Value.NOT_SURE for v in labels.values()),
        "unlabelled": [t for t in tasks if t not in labels],
        "backbones": backbones,
        "system": MLR_AGENT,
        "sources": [{"name": name, **flags_vs_labels(by_task, labels)} for name, by_task in flag_sources(findings)],
    }
