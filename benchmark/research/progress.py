"""The research pipeline's use of the channel layer: one group per research run, typed payloads.

An update is encoded once, here, and every viewer's socket sends that text as it is (issue 20).
"""

from __future__ import annotations

import json
from typing import Any, TypedDict

from accounts.progress import group_send
from benchmark.models import Artifact, ResearchRun


class StagePayload(TypedDict):
    stage: str
    label: str
    status: str  # pending | running | done | failed
    tokens_sent: int
    tokens_received: int
    cost: float
    priced: bool  # False: the data holds no price for this stage; the cost shown is "unpriced", not $0
    error: str
    given: bool


class ResearchPayload(TypedDict):
    status: str
    error: str
    tokens_sent: int
    tokens_received: int
    cost: float
    unpriced: list[str]  # stages whose cost the run's total leaves out (no price known)
    finished: bool
    stages: list[StagePayload]


def research_group(code: Any) -> str:
    return f"research_{code}"


def stage_payload(stage: str, artifact: Artifact | None) -> StagePayload:
    label = Artifact.Stage(stage).label
    if artifact is None:
        return {
            "stage": stage, "label": label, "status": "pending", "tokens_sent": 0, "tokens_received": 0,
            "cost": 0.0, "priced": True, "error": "", "given": False,
        }  # fmt: skip
    return {
        "stage": stage,
        "label": label,
        "status": artifact.status,
        "tokens_sent": artifact.tokens_sent,
        "tokens_received": artifact.tokens_received,
        "cost": artifact.cost,
        "priced": bool((artifact.data or {}).get("priced", True)),
        "error": artifact.error,
        "given": bool((artifact.data or {}).get("given")),
    }


def timeline(run: ResearchRun) -> list[StagePayload]:
    """Every stage of the pipeline in order: the run's own and any given inputs."""
    artifacts = {a.stage: a for a in run.artifacts.all()}
    order = [s.value for s in Artifact.Stage]
    shown = [s for s in order if s in artifacts or s in (run.stages or [])]
    return [stage_payload(s, artifacts.get(s)) for s in shown]


def research_payload(run: ResearchRun) -> ResearchPayload:
    stages = timeline(run)
    return {
        "status": run.status,
        "error": run.error,
        "tokens_sent": run.tokens_sent,
        "tokens_received": run.tokens_received,
        "cost": run.cost,
        "unpriced": [s["label"] for s in stages if not s["priced"] and s["status"] != "pending"],
        "finished": run.status not in (ResearchRun.Status.QUEUED, ResearchRun.Status.RUNNING),
        "stages": stages,
    }


def research_wire(kind: str, run: ResearchRun) -> str:
    """The websocket message {"type": kind, "run": <state>}, encoded once for every viewer."""
    return json.dumps({"type": kind, "run": research_payload(run)})


def research_send(run: ResearchRun) -> None:
    """Publish the run's whole (small) state: five stages at most, so a viewer never needs a catch-up query."""
    group_send(research_group(run.code), {"type": "research.update", "wire": research_wire("update", run)})
