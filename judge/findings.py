"""MLR-Bench's published findings, recomputed from the imported release, each next to the paper's figure.

Everything here is read from what `import_mlr_results` stored (runs, artifacts, judgments); nothing is
typed in except the paper's own figures (PUBLISHED, each with where the paper states it) and the list
price table (LIST_PRICES, each with its provider's price page). Where a figure cannot be reproduced the
section says why.

- Experiment-stage hallucination flags: each judge's released experiment review of each stepwise
  experiment (`has_hallucination`), per coding agent: flagged / judged, and "either judge" / "both".
- Referee's fabrication audit of the same experiments (benchmark/research/fabrication.py, deterministic):
  the numbers of the agent's own results report (results.md) looked for in what its code printed and
  wrote; an experiment is flagged when one number is found nowhere (the lab's default).
- Stage leaderboards: the experiment stage per coding agent and the writing stage per writing model,
  per judge and the judges' mean, mean and SD over tasks (like the idea/proposal leaderboards).
- End to end: each backbone's Overall (and every criterion) per judge and the judges' mean.
- Costs at list prices: the coding agent's cost as its trace states it (Claude Code's `cost_usd`),
  plus every text stage's tokens at the backbone's list price and the literature stage's at its
  model's; a stage whose model has no price here is "unpriced" and the total says so.
- The no-code ablation: the same papers reviewed with and without the code, per judge and criterion.

The human hallucination labels live in the review app (a higher layer); `flags_vs_labels` compares any
per-task flags with per-task labels and is called from there (review/templatetags/findings_humans.py).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.core.cache import caches
from django.db.models import Prefetch

from benchmark.models import Artifact, ResearchRun
from benchmark.research.fabrication import AUDIT_VERSION, audit_texts, collect_sources
from judge.models import JudgeExperiment, Judgment, Rubric

ATTRIBUTION = (
    "Figures computed from MLR-Bench's released data (github.com/chchenhui/mlrbench), MIT License, "
    "Copyright (c) 2025 Hui Chen."
)
PAPER = "MLR-Bench paper (Chen et al., 2025, arXiv:2505.19955)"
# The paper's own figures that the page compares with; `where` says where the paper states each.
PUBLISHED: dict[str, dict[str, Any]] = {
    "experiment_flagged": {
        "value": 8,
        "of": 10,
        "text": "fabricated or invalidated experimental results in 8 of 10 Claude Code experiments (80% of the cases)",
        "where": "abstract (80% of the cases) and the experimentation results",
    },
    "overall_claude": {"value": 4.70, "text": "end-to-end Overall, Claude backbone", "where": "end-to-end results"},
    "overall_o4-mini": {"value": 3.95, "text": "end-to-end Overall, o4-mini backbone", "where": "end-to-end results"},
    "cost_claude": {
        "value": 2.40,
        "text": "end-to-end cost per paper, Claude backbone (USD)",
        "where": "cost analysis",
    },
    "cost_o4-mini": {
        "value": 1.15,
        "text": "end-to-end cost per paper, o4-mini backbone (USD)",
        "where": "cost analysis",
    },
}
# USD per million tokens (input, output), the providers' published list prices for these model versions.
LIST_PRICES: dict[str, dict[str, Any]] = {
    "claude-3-7-sonnet-20250219": {"in": 3.00, "out": 15.00, "source": "anthropic.com/pricing (Claude 3.7 Sonnet)"},
    "o4-mini-2025-04-16": {"in": 1.10, "out": 4.40, "source": "openai.com/api/pricing (o4-mini)"},
    "gemini-2.5-pro-preview-03-25": {
        "in": 1.25,
        "out": 10.00,
        "source": "ai.google.dev/pricing (Gemini 2.5 Pro Preview, prompts up to 200k tokens)",
        "max_prompt": 200_000,  # above it the price doubles: such a stage is left unpriced, not guessed
    },
    "gpt-4o-search-preview-2025-03-11": {
        "in": 2.50,
        "out": 10.00,
        "source": "openai.com/api/pricing (gpt-4o-search-preview tokens; the per-search fee is not counted)",
    },
}
# A stored model label -> its price row (the release names models with and without dates or providers).
_PRICE_ALIASES = {
    "claude": "claude-3-7-sonnet-20250219",
    "claude-3-7-sonnet": "claude-3-7-sonnet-20250219",
    "o4-mini": "o4-mini-2025-04-16",
    "gemini": "gemini-2.5-pro-preview-03-25",
    "gemini-2.5-pro-preview": "gemini-2.5-pro-preview-03-25",
    "gpt-4o-search-preview": "gpt-4o-search-preview-2025-03-11",
}
FLAG = "hallucination"
# The release's usage files do not name the literature stage's model; MLR-Bench's own code does
# (mlrbench/agent/lit_review.py calls gpt-4o-search-preview-2025-03-11).
LITERATURE_MODEL = "gpt-4o-search-preview-2025-03-11"


def price_of(model: str) -> dict[str, Any] | None:
    name = (model or "").split(":")[-1].split("/")[-1].strip()
    if name in LIST_PRICES:
        return {"model": name, **LIST_PRICES[name]}
    key = _PRICE_ALIASES.get(name) or next((k for k in LIST_PRICES if name and k.startswith(name)), None)
    return {"model": key, **LIST_PRICES[key]} if key else None


@dataclass
class Cell:
    mean: float | None
    sd: float | None
    n: int


def _cell(values: list[float]) -> Cell:
    if not values:
        return Cell(None, None, 0)
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else None
    return Cell(mean, sd, len(values))


def _short(judge: str) -> str:
    return judge.split(":")[-1]


@dataclass
class Scored:
    """What the page needs of one judgment (rows, not model instances: a review's reply, the paper's text
    and the run's settings are most of a judgment row's bytes and none of what is shown)."""

    artifact_id: int
    judge_model: str
    scores: dict[str, Any]
    rubric_id: int
    backbone: str
    task: str

    def score_of(self, key: str) -> float | None:
        value = (self.scores or {}).get(key)
        if isinstance(value, dict):
            value = value.get("score")
        return float(value) if isinstance(value, int | float) else None


def _judgments(**filters: Any) -> list[Scored]:
    """Each judge's latest succeeded judgment per artifact (re-imports or re-runs never count twice); only the
    release's own reviews of released runs: the page shows the paper's findings, and researchers may read it."""
    rows = (
        Judgment.objects.filter(
            status=Judgment.Status.SUCCEEDED,
            source=Judgment.Source.MLRBENCH,
            artifact__research_run__source__in=ResearchRun.RELEASED,
            artifact__research_run__owner__isnull=True,  # released data is ownerless
            **filters,
        )
        .order_by("artifact_id", "judge_model", "-created_at", "-id")
        .values_list(
            "artifact_id",
            "judge_model",
            "scores",
            "rubric_id",
            "artifact__research_run__backbone",
            "artifact__research_run__task__slug",
        )  # fmt: skip
    )
    seen: set[tuple[int, str]] = set()
    out = []
    for row in rows:
        if (row[0], row[1]) not in seen:
            seen.add((row[0], row[1]))
            out.append(Scored(*row))
    return out


def _rubric(judgments: list[Scored]) -> Rubric | None:
    return Rubric.objects.filter(pk=judgments[0].rubric_id).first() if judgments else None


# --- experiment-stage flags and Referee's audit of the same experiments --------------------------


def _stepwise_experiments() -> list[Artifact]:
    return list(
        Artifact.objects.filter(
            stage=Artifact.Stage.EXPERIMENT,
            research_run__source=ResearchRun.Source.STEPWISE,
            research_run__stages=[Artifact.Stage.EXPERIMENT],
            research_run__owner__isnull=True,
        )
        .select_related("research_run__task")
        .order_by("research_run__backbone", "research_run__task__slug")
    )


def experiment_flags(*, audit: bool = True) -> dict[str, Any]:
    experiments = _stepwise_experiments()
    judgments = _judgments(artifact__in=experiments, rubric__stage=Rubric.Stage.EXPERIMENT, experiment__isnull=True)
    flag: dict[tuple[int, str], bool | None] = {}
    judges = sorted({j.judge_model for j in judgments})
    for j in judgments:
        value = j.score_of(FLAG)
        flag[(j.artifact_id, j.judge_model)] = None if value is None else value >= 1
    agents: dict[str, dict[str, Any]] = {}
    for experiment in experiments:
        agent = experiment.research_run.backbone
        name = ((experiment.data or {}).get("agent") or {}).get("name") or agent
        block = agents.setdefault(agent, {"agent": agent, "agent_name": name, "tasks": []})
        flags = {judge: flag.get((experiment.pk, judge)) for judge in judges}
        row: dict[str, Any] = {
            "task": experiment.research_run.task.slug,
            "run": str(experiment.research_run.code),
            "flags": [flags[judge] for judge in judges],
            "either": any(v for v in flags.values()) if any(v is not None for v in flags.values()) else None,
            "both": all(flags.values()) if flags and all(v is not None for v in flags.values()) else None,
        }
        if audit:
            row["audit"] = _audit(experiment, experiment)
        block["tasks"].append(row)
    for block in agents.values():
        rows = block["tasks"]
        block["per_judge"] = [_count([r["flags"][k] for r in rows]) for k in range(len(judges))]
        block["either"] = _count([r["either"] for r in rows])
        block["both"] = _count([r["both"] for r in rows])
        if audit:
            block["audit"] = _count([r["audit"]["flags"] for r in rows])
    names = [_short(j) for j in judges]
    for block in agents.values():
        block["sources"] = [
            *[{"name": f"{name} judge", "count": c} for name, c in zip(names, block["per_judge"], strict=True)],
            *([{"name": "either judge", "count": block["either"]}, {"name": "both judges", "count": block["both"]}]
              if len(judges) > 1 else []),
            *([{"name": "Referee's fabrication audit", "count": block["audit"]}] if audit else []),
        ]  # fmt: skip
        published = PUBLISHED["experiment_flagged"] if block["agent"] == "claude" else None
        block["published"] = published
        for source in block["sources"]:
            c = source["count"]
            source["matches"] = bool(published) and (c["flagged"], c["judged"]) == (published["value"], published["of"])
        block["reproduced_by"] = [x["name"] for x in block["sources"] if x["matches"]]
    return {"judges": judges, "judge_names": names, "agents": list(agents.values())}


def _audit(text: Artifact, experiment: Artifact | None) -> dict[str, Any]:
    """The fabrication audit of a report (an experiment's own results, or a paper) against its run's
    experiment, cached per (audit version, both artifacts' text and files): it reads every trace and log the
    run stored (seconds), while its inputs change only on re-import."""
    parts = [AUDIT_VERSION, text.pk, text.content]
    if experiment is not None:
        parts += [experiment.pk, experiment.files, experiment.data]
    digest = hashlib.sha256(json.dumps(parts, default=str, sort_keys=True).encode()).hexdigest()
    key = f"findings:audit:{digest}"
    cache = caches["agreement"]
    result = cache.get(key)
    if result is None:
        if experiment is None:
            sources, excluded = [], [{"file": "-", "reason": "the run has no experiment stage"}]
        else:
            sources, excluded = collect_sources(experiment)
        full = audit_texts(text.content, sources, excluded)
        result = {k: full[k] for k in ("claims", "flagged", "note")}
        cache.set(key, result, timeout=None)
    return {**result, "flags": (result["flagged"] >= 1) if result["claims"] else None}


def paper_audits() -> list[dict[str, Any]]:
    """Referee's audit of each end-to-end paper (the papers the humans' check names) against its own run's
    experiment, per backbone: the same audit, on what the humans read."""
    papers = list(
        Artifact.objects.filter(
            stage=Artifact.Stage.PAPER,
            research_run__source=ResearchRun.Source.MLRBENCH,
            research_run__owner__isnull=True,
        ).select_related("research_run__task")
    )
    experiments = {
        a.research_run_id: a
        for a in Artifact.objects.filter(
            stage=Artifact.Stage.EXPERIMENT, research_run_id__in=[p.research_run_id for p in papers]
        )
    }
    by_backbone: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for paper in sorted(papers, key=lambda p: (p.research_run.backbone, p.research_run.task.slug)):
        result = _audit(paper, experiments.get(paper.research_run_id))
        by_backbone[paper.research_run.backbone].append(
            {"task": paper.research_run.task.slug, "run": str(paper.research_run.code), **result}
        )
    return [
        {"backbone": b, "papers": rows, "count": _count([r["flags"] for r in rows])}
        for b, rows in sorted(by_backbone.items())
    ]


def _count(values: list[bool | None]) -> dict[str, int]:
    judged = [v for v in values if v is not None]
    return {"flagged": sum(judged), "judged": len(judged), "missing": len(values) - len(judged)}


def flags_vs_labels(flags: dict[str, bool | None], labels: dict[str, str]) -> dict[str, Any]:
    """Per task: flags (True = flagged) against labels ('yes' / 'no' / 'not_sure'): the confusion
    counts, precision and recall of the flags for the labels' Yes. Tasks with no flag, no label or
    'Not Sure' are left out and counted."""
    tp = fp = fn = tn = 0
    left_out: list[str] = []
    for task in sorted(set(flags) | set(labels)):
        f, label = flags.get(task), labels.get(task)
        if f is None or label not in ("yes", "no"):
            left_out.append(task)
            continue
        truth = label == "yes"
        tp += f and truth
        fp += f and not truth
        fn += (not f) and truth
        tn += (not f) and not truth
    return {
        "tp": tp, "fp": fp, "fn": fn, "tn": tn, "n": tp + fp + fn + tn, "left_out": left_out,
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
    }  # fmt: skip


def flag_sources(findings: dict[str, Any]) -> list[tuple[str, dict[str, bool | None]]]:
    """(name, task -> flag) for every flag source: each judge's experiment flag, either, both, Referee's audit
    of the experiments, and its audit of each backbone's end-to-end papers."""
    flags = findings["experiment_flags"]
    out: list[tuple[str, dict[str, bool | None]]] = []
    for block in flags["agents"]:
        prefix = f"{block['agent_name']} experiment · "
        for k, name in enumerate(flags["judge_names"]):
            out.append((f"{prefix}{name} flag", {r["task"]: r["flags"][k] for r in block["tasks"]}))
        if len(flags["judges"]) > 1:
            out.append((f"{prefix}either judge", {r["task"]: r["either"] for r in block["tasks"]}))
            out.append((f"{prefix}both judges", {r["task"]: r["both"] for r in block["tasks"]}))
        if "audit" in block:
            out.append((f"{prefix}Referee audit", {r["task"]: r["audit"]["flags"] for r in block["tasks"]}))
    for audits in findings.get("paper_audits", []):
        out.append(
            (
                f"end-to-end {audits['backbone']} paper · Referee audit",
                {r["task"]: r["flags"] for r in audits["papers"]},
            )
        )
    return out


# --- stage leaderboards: experiment per coding agent, writing per writing model --------------------


def stage_board(stage: str) -> dict[str, Any]:
    """Rows (coding agent or writing model) x criteria, per judge and the judges' mean, over tasks."""
    judgments = _judgments(
        rubric__stage=stage,
        experiment__isnull=True,
        artifact__research_run__source=ResearchRun.Source.STEPWISE,
        artifact__research_run__stages=[Rubric.Stage.EXPERIMENT if stage == Rubric.Stage.EXPERIMENT else "paper"],
    )
    rubric = _rubric(judgments)
    criteria = [(d["key"], d.get("name", d["key"])) for d in (rubric.score_dimensions if rubric else [])]
    judges = sorted({j.judge_model for j in judgments})
    scores: dict[tuple[str, int], dict[str, dict[str, float]]] = defaultdict(dict)  # (row, artifact) -> judge -> key
    for j in judgments:
        scores[(j.backbone, j.artifact_id)][j.judge_model] = {
            k: v for k, _ in criteria if (v := j.score_of(k)) is not None
        }
    rows = sorted({r for r, _ in scores})
    views = [*[_short(j) for j in judges], "judges' mean"] if len(judges) > 1 else [_short(j) for j in judges]
    out_rows = []
    for row in rows:
        items = [by for (r, _), by in scores.items() if r == row]
        cells: dict[str, list[Cell]] = {}
        for judge in judges:
            cells[_short(judge)] = [
                _cell([by[judge][k] for by in items if k in by.get(judge, {})]) for k, _ in criteria
            ]
        if len(judges) > 1:
            cells["judges' mean"] = [
                _cell([sum(v) / len(v) for by in items if (v := [by[j][k] for j in judges if k in by.get(j, {})])])
                for k, _ in criteria
            ]
        out_rows.append({"row": row, "items": len(items), "cells": cells})
    if criteria and "overall" in dict(criteria):
        o = [k for k, _ in criteria].index("overall")
        last = views[-1] if views else ""
        out_rows.sort(key=lambda r: -(r["cells"][last][o].mean or -math.inf))
    return {
        "stage": stage,
        "rubric": f"{rubric.stage} v{rubric.version}" if rubric else None,
        "criteria": criteria,
        "views": views,
        "grid": [
            {"view": v, "rows": [{"row": r["row"], "items": r["items"], "cells": r["cells"][v]} for r in out_rows]}
            for v in views
        ],  # fmt: skip
        "judgments": len(judgments),
    }


# --- end to end: Overall per backbone, and costs at list prices -----------------------------------


def end_to_end() -> dict[str, Any]:
    judgments = _judgments(
        rubric__stage=Rubric.Stage.END_TO_END,
        experiment__isnull=True,
        with_supplementary=True,
        artifact__stage=Artifact.Stage.PAPER,
        artifact__research_run__source=ResearchRun.Source.MLRBENCH,
    )
    rubric = _rubric(judgments)
    criteria = [(d["key"], d.get("name", d["key"])) for d in (rubric.score_dimensions if rubric else [])]
    judges = sorted({j.judge_model for j in judgments})
    per: dict[str, dict[int, dict[str, dict[str, float]]]] = defaultdict(lambda: defaultdict(dict))
    for j in judgments:
        per[j.backbone][j.artifact_id][j.judge_model] = {k: v for k, _ in criteria if (v := j.score_of(k)) is not None}
    rows = []
    for backbone in sorted(per):
        items = list(per[backbone].values())
        cells = {
            "judges' mean": [
                _cell([sum(v) / len(v) for by in items if (v := [by[j][k] for j in judges if k in by.get(j, {})])])
                for k, _ in criteria
            ],
            **{
                _short(j): [_cell([by[j][k] for by in items if k in by.get(j, {})]) for k, _ in criteria]
                for j in judges
            },
        }
        published = PUBLISHED.get(f"overall_{backbone}")
        overall = (
            cells["judges' mean"][[k for k, _ in criteria].index("overall")]
            if ("overall", "Overall") in criteria
            else None
        )
        rows.append({
            "backbone": backbone, "papers": len(items), "cells": cells, "overall": overall,
            "published": published,
            "matches": (published is not None and overall is not None and overall.mean is not None
                        and round(overall.mean, 2) == published["value"]),
        })  # fmt: skip
    return {"criteria": criteria, "views": ["judges' mean", *[_short(j) for j in judges]], "rows": rows}


STAGE_LABELS = {"idea": "idea", "literature": "literature review", "proposal": "proposal", "paper": "paper"}


def _stage_cost(artifact: Artifact, fallback_model: str) -> dict[str, Any]:
    model = (artifact.data or {}).get("model") or fallback_model
    price = price_of(model)
    cost = None
    reason = ""
    if price is None:
        reason = f"no list price known for {model or 'an unnamed model'}"
    elif price.get("max_prompt") and artifact.tokens_sent > price["max_prompt"]:
        reason = f"{artifact.tokens_sent} prompt tokens: above the {price['max_prompt']} tier this table prices"
    else:
        cost = artifact.tokens_sent * price["in"] / 1e6 + artifact.tokens_received * price["out"] / 1e6
    return {
        "stage": artifact.stage, "model": model, "tokens_in": artifact.tokens_sent,
        "tokens_out": artifact.tokens_received, "cost": cost, "price": price, "unpriced": reason,
    }  # fmt: skip


def costs() -> dict[str, Any]:
    """Per backbone: the mean cost per end-to-end run, every stage counted (or named as unpriced)."""
    runs = ResearchRun.objects.filter(source=ResearchRun.Source.MLRBENCH, owner__isnull=True).prefetch_related(
        Prefetch("artifacts", queryset=Artifact.objects.defer("content"))
    )
    by_backbone: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in runs.select_related("task").order_by("backbone", "task__slug"):
        stages = []
        backbone_model = (run.settings or {}).get("model") or run.backbone
        for artifact in sorted(run.artifacts.all(), key=lambda a: a.pk):
            if artifact.stage == Artifact.Stage.EXPERIMENT:
                priced = (artifact.data or {}).get("priced", False)
                stages.append({
                    "stage": "experiment", "model": ((artifact.data or {}).get("agent") or {}).get("name", "coding agent"),
                    "tokens_in": artifact.tokens_sent, "tokens_out": artifact.tokens_received,
                    "cost": artifact.cost if priced else None, "price": None,
                    "unpriced": "" if priced else ((artifact.data or {}).get("cost_note") or "the data holds no cost"),
                })  # fmt: skip
            elif artifact.tokens_sent or artifact.tokens_received:
                fallback = LITERATURE_MODEL if artifact.stage == Artifact.Stage.LITERATURE else backbone_model
                stages.append(_stage_cost(artifact, fallback))
        by_backbone[run.backbone].append({"task": run.task.slug, "stages": stages})
    rows = []
    for backbone, items in sorted(by_backbone.items()):
        names = sorted({s["stage"] for it in items for s in it["stages"]}, key=_stage_order)
        per_stage = []
        for name in names:
            values = [s for it in items for s in it["stages"] if s["stage"] == name]
            priced = [s["cost"] for s in values if s["cost"] is not None]
            per_stage.append({
                "stage": name, "models": sorted({s["model"] for s in values}),
                "mean": sum(priced) / len(priced) if priced else None, "priced": len(priced), "runs": len(values),
                "unpriced": sorted({s["unpriced"] for s in values if s["unpriced"]}),
            })  # fmt: skip
        complete = [it for it in items if it["stages"] and all(s["cost"] is not None for s in it["stages"])]
        total = sum(sum(s["cost"] for s in it["stages"]) for it in complete) / len(complete) if complete else None
        agent_only = [
            s["cost"] for it in items for s in it["stages"] if s["stage"] == "experiment" and s["cost"] is not None
        ]
        published = PUBLISHED.get(f"cost_{backbone}")
        rows.append({
            "backbone": backbone, "runs": len(items), "complete": len(complete), "total": total,
            "agent_only": sum(agent_only) / len(agent_only) if agent_only else None,
            "stages": per_stage, "published": published,
            "matches": published is not None and total is not None and round(total, 2) == published["value"],
        })  # fmt: skip
    return {"rows": rows, "prices": [{"model": k, **v} for k, v in LIST_PRICES.items()]}


def _stage_order(name: str) -> int:
    order = ["idea", "literature", "proposal", "experiment", "paper"]
    return order.index(name) if name in order else len(order)


# --- the no-code ablation ---------------------------------------------------------------------------


def ablation() -> dict[str, Any]:
    """Per judge: the ablation's papers reviewed without the code (its released judge experiment) against
    the same papers' released reviews with the code, per criterion: means, the mean paired difference."""
    experiments = JudgeExperiment.objects.filter(config__name__startswith="MLR-Bench ablation:").select_related(
        "config__rubric"
    )
    out = []
    for experiment in experiments.order_by("config__judge_model"):
        judge = experiment.config.judge_model
        rubric = experiment.config.rubric
        criteria = [(d["key"], d.get("name", d["key"])) for d in rubric.score_dimensions]
        without = {j.artifact_id: j for j in _judgments(experiment=experiment, judge_model=judge)}
        with_code = {
            j.artifact_id: j
            for j in _judgments(
                artifact_id__in=list(without),
                judge_model=judge,
                experiment__isnull=True,
                rubric__stage=rubric.stage,
                with_supplementary=True,
            )  # fmt: skip
        }
        papers = sorted(set(without) & set(with_code))
        rows = []
        for key, name in criteria:
            pairs = [(with_code[p].score_of(key), without[p].score_of(key)) for p in papers]
            pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
            rows.append({
                "key": key, "name": name, "n": len(pairs),
                "with_code": _cell([a for a, _ in pairs]).mean, "without_code": _cell([b for _, b in pairs]).mean,
                "difference": _cell([b - a for a, b in pairs]).mean,
            })  # fmt: skip
        items = [{"task": without[p].task, "backbone": without[p].backbone} for p in papers]
        out.append({
            "judge": _short(judge), "papers": len(papers), "items": items, "rows": rows,
            "unpaired": len(set(without) - set(with_code)),  # no-code reviews whose with-code review is missing
        })  # fmt: skip
    return {"judges": out}


# --- everything, with the state it was computed from -------------------------------------------


def findings_compute() -> dict[str, Any]:
    return {
        "paper": PAPER,
        "attribution": ATTRIBUTION,
        "published": PUBLISHED,
        "experiment_flags": experiment_flags(),
        "paper_audits": paper_audits(),
        "experiment_board": stage_board(Rubric.Stage.EXPERIMENT),
        "writing_board": stage_board(Rubric.Stage.WRITING),
        "end_to_end": end_to_end(),
        "costs": costs(),
        "ablation": ablation(),
    }
