"""Two runs side by side: their facts, and their steps aligned with the actions that diverge.

Runs on the same task are aligned by step index. A replay and its original (or any two runs whose
actions were the same sequence with insertions) are aligned by action, so a step the replay
skipped does not shift every later row.

Stretches of FOLD_MIN or more rows with the same action are folded into one "N steps with the same
action" row: the page renders the rows that differ, and the folded ones travel as compact data the
browser turns into rows when asked (two 1,000-step runs that agree mostly render a few dozen rows).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from django.db.models.functions import MD5

from benchmark.models import Run, Score, Step
from benchmark.templatetags.run_numbers import score_text

BY_STEP = "step"
BY_ACTION = "action"
FOLD_MIN = 3  # a shorter stretch of equal actions is shown as it is


@dataclass
class Side:
    index: int
    action: str
    observation_hash: str  # MD5 of the output
    score: str


@dataclass
class Row:
    a: Side | None
    b: Side | None
    same_action: bool
    same_output: bool
    diff: str = ""


@dataclass
class Fold:
    """A stretch of rows with the same action on both sides, shown folded."""

    number: int
    start: int  # position in rows of its first row
    rows: list[Row]
    is_fold = True  # for the template, which cannot ask isinstance

    @property
    def steps_of_a(self) -> str:
        first, last = self.rows[0].a, self.rows[-1].a
        return f"{first.index}–{last.index}" if first and last else ""

    @property
    def outputs_differ(self) -> int:
        return sum(not row.same_output for row in self.rows)


@dataclass
class Comparison:
    mode: str
    rows: list[Row]
    facts: list[tuple[str, str, str]]
    first_divergence: int | None  # position in rows of the first row whose actions differ
    differing: int = 0
    series: list[dict[str, Any]] = field(default_factory=list)
    blocks: list[tuple[int, Row | Fold]] = field(default_factory=list)  # (position in rows, row or fold)
    start: int | None = None  # the first step index compared, when not the first step

    def folded(self) -> dict[int, list[list[Any]]]:
        """{fold number: its rows as [A index, A action, A score, B index, B action, B score, same output]}."""
        return {
            block.number: [
                [r.a.index, r.a.action, r.a.score, r.b.index, r.b.action, r.b.score, r.same_output]
                for r in block.rows
                if r.a is not None and r.b is not None
            ]
            for _, block in self.blocks
            if isinstance(block, Fold)
        }


def _blocks(rows: list[Row]) -> list[tuple[int, Row | Fold]]:
    blocks: list[tuple[int, Row | Fold]] = []
    start = folds = 0
    while start < len(rows):
        end = start
        while end < len(rows) and rows[end].same_action:
            end += 1
        if end - start >= FOLD_MIN:
            blocks.append((start, Fold(number=folds, start=start, rows=rows[start:end])))
            folds += 1
            start = end
        else:
            blocks.append((start, rows[start]))
            start += 1
    return blocks


def _sides(run: Run, start: int | None = None) -> list[Side]:
    scores: dict[int, Score] = {}
    for score in Score.objects.filter(run=run, step__isnull=False, step__index__gte=start or 0).order_by("id"):
        scores[score.step_id] = score
    sides = []
    # Outputs are compared by their MD5, computed by the database: only equality matters, and
    # fetching two runs' whole outputs (KiBs a step) was most of a 1,000-step comparison's time.
    steps = (
        Step.objects.filter(run=run, index__gte=start or 0)
        .order_by("index")
        .annotate(observation_md5=MD5("observation"))
        .values_list("id", "index", "action", "observation_md5")
    )
    for pk, index, action, observation_md5 in steps:
        score = scores.get(pk)
        chip = ""
        if score is not None:
            chip = f"{score.kind}: " + ("failed" if score.error else score_text(score.primary))
        sides.append(Side(index, action, observation_md5, chip))
    return sides


def _pairs(a: list[Side], b: list[Side], mode: str) -> list[tuple[Side | None, Side | None]]:
    if mode == BY_STEP:
        by_index = {side.index: side for side in b}
        indexes = sorted({side.index for side in a} | set(by_index))
        first = {side.index: side for side in a}
        return [(first.get(i), by_index.get(i)) for i in indexes]
    matcher = difflib.SequenceMatcher(None, [s.action for s in a], [s.action for s in b], autojunk=False)
    pairs: list[tuple[Side | None, Side | None]] = []
    for _tag, i1, i2, j1, j2 in matcher.get_opcodes():
        left, right = a[i1:i2], b[j1:j2]
        for k in range(max(len(left), len(right))):
            pairs.append((left[k] if k < len(left) else None, right[k] if k < len(right) else None))
    return pairs


def _limits(run: Run) -> str:
    params = run.params or {}
    parts = [f"{params['max_steps']} steps" if params.get("max_steps") else f"{run.agent.max_steps} steps (agent)"]
    if params.get("cost_limit") is not None:
        parts.append(f"${params['cost_limit']}")
    if params.get("command_timeout"):
        parts.append(f"{params['command_timeout']} s/command")
    return " · ".join(parts)


def _facts(a: Run, b: Run) -> list[tuple[str, str, str]]:
    def both(label: str, get: Any) -> tuple[str, str, str]:
        return (label, str(get(a)), str(get(b)))

    def cost(run: Run) -> str:
        return "unknown" if "cost" in ((run.params or {}).get("unknown") or ()) else f"${run.cost:.4f}"

    return [
        both("Task", lambda r: f"{r.task.title} ({r.task.slug})"),
        both("Agent / model", lambda r: r.agent.model or r.agent.name),
        both("Source", lambda r: r.get_source_display()),
        both("Status", lambda r: r.get_status_display()),
        both("Exit status", lambda r: r.exit_status or "–"),
        both("Steps", lambda r: r.step_count),
        both("Best attempt", lambda r: score_text(r.best_attempt)),
        both("Submission", lambda r: score_text(r.best_submission)),
        both("Cost", cost),
        both("Tokens in / out", lambda r: f"{r.tokens_sent} / {r.tokens_received}"),
        both("API calls", lambda r: r.api_calls),
        both("Limits", _limits),
        both("Wall time", lambda r: "–" if r.wall_time is None else f"{r.wall_time:.1f} s"),
    ]


def score_series(run: Run, label: str) -> dict[str, Any]:
    """The run's scores over steps, for the chart: validate and submit scores with a value."""
    points = (
        Score.objects.filter(run=run, step__isnull=False, primary__isnull=False, error="")
        .order_by("step__index")
        .values_list("step__index", "primary", "kind")
    )
    return {"label": label, "points": [[index, value, kind] for index, value, kind in points]}


def cost_series(run: Run) -> dict[str, Any]:
    """Cumulative cost and tokens over the run's steps, for the run page's cost chart.

    Steps Referee recorded carry their own cost and tokens (0 for a step no model call made). Steps of
    an imported trajectory carry none (MLGym's .traj gives only the run's totals): they are missing,
    never a flat line at 0, and the chart says so."""
    if run.source != Run.Source.REFEREE:
        return {"known": False, "cost": [], "tokens": []}
    cost = tokens = 0.0
    cost_points, token_points = [], []
    steps = (
        Step.objects.filter(run=run).order_by("index").values_list("index", "cost", "tokens_sent", "tokens_received")
    )
    for index, step_cost, sent, received in steps:
        cost += step_cost
        tokens += sent + received
        cost_points.append([index, round(cost, 6), "cost"])
        token_points.append([index, tokens, "tokens"])
    return {
        "known": True,
        "cost": [{"label": "cumulative cost ($)", "points": cost_points}],
        "tokens": [{"label": "cumulative tokens (in + out)", "points": token_points}],
    }


def runs_compare(a: Run, b: Run, *, start: int | None = None) -> Comparison:
    """`start`: compare the steps from that index on (a fork and its parent, from the fork point)."""
    related = a.replay_of_id == b.pk or b.replay_of_id == a.pk
    mode = BY_ACTION if related else BY_STEP
    rows = []
    for left, right in _pairs(_sides(a, start), _sides(b, start), mode):
        same_action = left is not None and right is not None and left.action == right.action
        same_output = same_action and left.observation_hash == right.observation_hash
        diff = ""
        if left is not None and right is not None and not same_action:
            diff = "\n".join(
                difflib.unified_diff(
                    left.action.splitlines(), right.action.splitlines(), "run A", "run B", lineterm="", n=1
                )
            )
        rows.append(Row(left, right, same_action, same_output, diff))
    differing = [i for i, row in enumerate(rows) if not row.same_action]
    return Comparison(
        mode=mode,
        rows=rows,
        facts=_facts(a, b),
        first_divergence=differing[0] if differing else None,
        differing=len(differing),
        series=[score_series(a, "run A"), score_series(b, "run B")],
        blocks=_blocks(rows),
        start=start,
    )
