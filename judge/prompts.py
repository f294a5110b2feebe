"""Render a rubric version into the prompt a judge model answers, for one artifact.

The prompt holds the task text, the artifact, the inputs it should be consistent with, the
rubric's questions and anchors, and -- for the experiment, end-to-end and hallucination stages --
the experiment's code and trace unless the judgment withholds them. The sha256 of the exact text
sent is stored with the judgment, so an agreement report can say which prompt produced a score.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmark.models import Artifact
from benchmark.research import files as artifact_files
from judge.models import Rubric
from judge.rubrics import SUPPLEMENTARY_STAGES

CODE_SUFFIXES = (".py", ".sh", ".ipynb", ".yaml", ".yml", ".toml", ".cfg", ".r", ".jl", ".cpp", ".c", ".h")
TRACE_NAMES = ("claude_output.json", "trace.json", "trace.jsonl", "log.txt")
CODE_BUDGET = 40_000  # characters of code shown; the rest is cut with a note (judges have finite context)
TRACE_BUDGET = 80_000  # the agent's trace holds the code it wrote (tool inputs) and what the runs printed
BLOCK_BUDGET = 4_000  # one message block of a trace (a long file read or listing is cut in the middle)
MATERIAL_BUDGET = 12_000  # each earlier-stage input (idea, proposal, results) shown for consistency

# The earlier artifacts a stage's consistency is judged against.
INPUTS_FOR_STAGE: dict[str, tuple[str, ...]] = {
    "idea": (),
    "proposal": ("idea", "literature"),
    "experiment": ("proposal",),
    "writing": ("idea", "proposal", "experiment"),
    "end2end": (),
    "hallucination": ("literature",),
}

SYSTEM = (
    "You are an expert reviewer for machine-learning research, working for Referee, a platform that "
    "evaluates AI research agents. You judge strictly by the rubric you are given, using its score "
    "anchors, and you justify every score with specific evidence from the material. You reply with a "
    "single JSON object and nothing else."
)


@dataclass(frozen=True)
class RenderedPrompt:
    system: str
    user: str

    @property
    def hash(self) -> str:
        return hashlib.sha256(f"{self.system}\n\n{self.user}".encode()).hexdigest()


def _clip(text: str, budget: int) -> str:
    """Keep the head and the tail (where results and errors usually are) and say how much was cut."""
    if len(text) <= budget:
        return text
    half = budget // 2
    return f"{text[:half]}\n\n[... {len(text) - budget:,} characters cut by Referee ...]\n\n{text[-half:]}"


def _read(artifact: Artifact, relative: str) -> str | None:
    return artifact_files.read_text(artifact.code, relative)


def _block_text(block: Any) -> str:
    """One content block of a chat trace (Anthropic shape: text, tool_use, tool_result) as text."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return json.dumps(block, ensure_ascii=False)
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":  # the code the agent wrote is in here (Write/Edit inputs): keep it readable
        return f"<tool_use {block.get('name')}> {json.dumps(block.get('input'), ensure_ascii=False, indent=1)}"
    if "content" in block:
        return _content_text(block["content"])
    return json.dumps(block, ensure_ascii=False)


def _content_text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(_clip(_block_text(b), BLOCK_BUDGET) for b in content)
    return _clip(_block_text(content), BLOCK_BUDGET)


def _trace_text(value: Any) -> str:
    """A trace stored as JSON (a list of chat messages, or a summary object) or text, as readable text."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, indent=1)
    lines = []
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, dict):
            role = item.get("role") or item.get("type") or "item"
            body = item.get("content", item.get("result", ""))
            lines.append(f"[{role}] {_content_text(body)}")
        else:
            lines.append(str(item))
    return "\n".join(lines)


def supplementary(artifact: Artifact) -> tuple[str, str]:
    """(code, trace) of the research run's experiment, as text; empty strings when there is none."""
    experiment = (
        artifact
        if artifact.stage == Artifact.Stage.EXPERIMENT
        else artifact.research_run.artifacts.filter(stage=Artifact.Stage.EXPERIMENT).first()
    )
    if experiment is None:
        return "", ""
    code_parts, trace_parts = [], []
    logs = set((experiment.data or {}).get("logs") or [])  # any agent's trace or log (codex_log.log, ...)
    for relative in experiment.files or []:
        name = Path(relative).name.lower()
        if name in TRACE_NAMES or relative in logs:
            text = _read(experiment, relative)
            if text is not None and name.endswith(".json"):
                try:
                    text = _trace_text(json.loads(text))
                except ValueError:
                    pass  # shown as stored
            if text is not None:
                trace_parts.append(f"--- {relative} ---\n{text}")
        elif name.endswith(CODE_SUFFIXES):
            text = _read(experiment, relative)
            if text is not None:
                code_parts.append(f"--- {relative} ---\n{text}")
    data = experiment.data or {}
    if data.get("trace"):  # a summary (released runs) or the trace itself: either way, first
        trace_parts.insert(0, f"--- trace summary ---\n{_clip(_trace_text(data['trace']), TRACE_BUDGET // 4)}")
    elif experiment.experiment_run_id:
        steps = experiment.experiment_run.steps.order_by("index").values_list(
            "index", "thought", "action", "observation"
        )
        trace_parts.extend(
            f"--- step {i} ---\nthought: {t}\naction: {a}\nobservation: {_clip(o, 2_000)}" for i, t, a, o in steps
        )
    return _clip("\n\n".join(code_parts), CODE_BUDGET), _clip("\n\n".join(trace_parts), TRACE_BUDGET)


def _dimension_text(dim: dict[str, Any]) -> str:
    kind = dim.get("kind", "score")
    if kind == "findings":
        head = f"### {dim['name']} (key `{dim['key']}`: a list of findings, possibly empty)"
        types = "\n".join(f"  - `{name}`: {text}" for name, text in dim.get("types", {}).items())
        questions = "\n".join(f"- {q}" for q in dim["questions"])
        return f"{head}\n{questions}\n- Finding types:\n{types}"
    if kind == "flag":
        head = f"### {dim['name']} (key `{dim['key']}`: 1 = yes, 0 = no)"
    else:
        head = f"### {dim['name']} (key `{dim['key']}`: an integer from {dim['min']} to {dim['max']})"
    questions = "\n".join(f"- {q}" for q in dim["questions"])
    anchors = "\n".join(f"  - {band}: {text}" for band, text in dim.get("anchors", {}).items())
    return f"{head}\n{questions}\n- Anchors:\n{anchors}"


def _reply_format(rubric: Rubric) -> str:
    example: dict[str, Any] = {}
    for dim in rubric.dimensions:
        kind = dim.get("kind", "score")
        if kind == "findings":
            example[dim["key"]] = [
                {"type": next(iter(dim.get("types", {"type": ""}))), "evidence": "...", "location": "..."}
            ]
            continue
        value: dict[str, Any] = {"score": f"<integer {dim['min']}-{dim['max']}>", "justification": "..."}
        for extra in dim.get("extra", []):
            value[extra] = ["..."]
        example[dim["key"]] = value
    return json.dumps(example, indent=2)


def system_prompt(note: str = "") -> str:
    """The judge's system prompt; a configuration's prompt variant (note) is appended, and hashed with it."""
    return f"{SYSTEM}\n\n{note.strip()}" if note.strip() else SYSTEM


def prompt_render(*, artifact: Artifact, rubric: Rubric, with_supplementary: bool, note: str = "") -> RenderedPrompt:
    run = artifact.research_run
    task = run.task
    sections = [
        f"# Rubric: {rubric.name} (version {rubric.version})\n\n{rubric.instructions}",
        f"# The research task ({task.venue} {task.year or ''}: {task.slug})\n\n{task.description.strip()}",
    ]
    inputs = {a.stage: a for a in run.artifacts.filter(stage__in=INPUTS_FOR_STAGE.get(rubric.stage, ()))}
    for stage in INPUTS_FOR_STAGE.get(rubric.stage, ()):
        if stage in inputs and inputs[stage].pk != artifact.pk and inputs[stage].content.strip():
            label = Artifact.Stage(stage).label
            sections.append(
                f"# Earlier stage for reference: {label}\n\n{_clip(inputs[stage].content.strip(), MATERIAL_BUDGET)}"
            )
    sections.append(f"# The {artifact.get_stage_display()} to judge\n\n{artifact.content.strip() or '(empty)'}")
    if rubric.stage in SUPPLEMENTARY_STAGES:
        if with_supplementary:
            code, trace = supplementary(artifact)
            no_code = "(no code files were kept for this run" + (
                "; the trace below shows what the agent wrote and ran)" if trace else ")"
            )
            sections.append(f"# Code of the experiment\n\n{code or no_code}")
            sections.append(f"# Execution trace of the experiment\n\n{trace or '(no trace was kept for this run)'}")
        else:
            sections.append(
                "# Code and trace\n\nWithheld for this judgment: judge from the text above alone, and say so "
                "where a score depends on what you could not check."
            )
    sections.append("# Rubric dimensions\n\n" + "\n\n".join(_dimension_text(d) for d in rubric.dimensions))
    sections.append(
        "# Your reply\n\nReply with one JSON object with exactly these keys, and nothing before or after it:\n\n"
        f"```json\n{_reply_format(rubric)}\n```"
    )
    return RenderedPrompt(system=system_prompt(note), user="\n\n".join(sections))


TRAJECTORY_BUDGET = 120_000  # characters of steps shown; a longer run keeps its first and last steps
STEP_BUDGET = 6_000  # one step's thought, action and output together (a long output is cut in the middle)


def _step_text(index: int, thought: str, action: str, observation: str, scores: list[str]) -> str:
    third = STEP_BUDGET // 3
    parts = [f"## Step {index}", f"Thought: {_clip(thought.strip(), third)}", f"Action: {_clip(action.strip(), third)}"]
    parts.append(f"Output: {_clip(observation.strip(), third)}")
    parts += [f"Score: {line}" for line in scores]
    return "\n".join(parts)


def trajectory_steps_text(run: Any, budget: int = TRAJECTORY_BUDGET) -> tuple[str, int]:
    """The run's steps as text, and how many steps were left out to fit `budget`.

    A run longer than the budget keeps its first steps (the plan) and its last ones (the results
    and the claims made about them), alternating from both ends; the gap is stated in the text.
    """
    from benchmark.models import Score

    scores: dict[int, list[str]] = {}
    for step_id, kind, primary, metrics, error in Score.objects.filter(run=run, step__isnull=False).values_list(
        "step_id", "kind", "primary", "metrics", "error"
    ):
        shown = error and f"evaluation error: {error[:500]}" or json.dumps(metrics or {"primary": primary})
        scores.setdefault(step_id, []).append(f"{kind}: {shown}")
    rows = list(run.steps.order_by("index").values_list("id", "index", "thought", "action", "observation"))
    texts = [_step_text(i, t or "", a or "", o or "", scores.get(pk, [])) for pk, i, t, a, o in rows]
    if sum(len(t) + 2 for t in texts) <= budget:
        return "\n\n".join(texts), 0
    head: list[int] = []
    tail: list[int] = []
    used, lo, hi = 0, 0, len(texts) - 1
    while lo <= hi:
        take = lo if len(head) <= len(tail) else hi
        if used + len(texts[take]) + 2 > budget:
            break
        used += len(texts[take]) + 2
        if take == lo:
            head.append(lo)
            lo += 1
        else:
            tail.insert(0, hi)
            hi -= 1
    left_out = len(texts) - len(head) - len(tail)
    first, last = rows[lo][1], rows[hi][1]
    gap = f"[... steps {first}-{last} ({left_out} of {len(texts)}) left out by Referee to fit the judge's context ...]"
    return "\n\n".join([*(texts[i] for i in head), gap, *(texts[i] for i in tail)]), left_out


def trajectory_render(*, run: Any, rubric: Rubric, note: str = "") -> RenderedPrompt:
    """The prompt for judging an agent run's trajectory. The agent's name and model are not in it:
    the judge, like the human reviewers, judges the work, not who did it."""
    task = run.task
    steps, left_out = trajectory_steps_text(run)
    extent = (
        f"{run.step_count} step(s), shown in full"
        if not left_out
        else (
            f"{run.step_count} step(s); {left_out} middle step(s) are left out to fit your context, the first and "
            "last steps are shown in full: say so where a score depends on what you could not see"
        )
    )
    outcome = run.exit_status or run.status
    sections = [
        f"# Rubric: {rubric.name} (version {rubric.version})\n\n{rubric.instructions}",
        f"# The task given to the agent ({task.slug})\n\n{task.title}\n\n{task.description.strip()}",
        f"# The trajectory to judge\n\nThe run ended with: {outcome}. It has {extent}. Each step shows the "
        "agent's thought, the action it ran, the output it saw and any validation or submission score.\n\n"
        f"{steps or '(no steps)'}",
        "# Rubric dimensions\n\n" + "\n\n".join(_dimension_text(d) for d in rubric.dimensions),
        "# Your reply\n\nReply with one JSON object with exactly these keys, and nothing before or after it:\n\n"
        f"```json\n{_reply_format(rubric)}\n```",
    ]
    return RenderedPrompt(system=system_prompt(note), user="\n\n".join(sections))


PAIRWISE_REPLY = {"preferred": "first | second | tie", "justification": "..."}


def pairwise_render(*, first: Artifact, second: Artifact, rubric: Rubric, note: str = "") -> RenderedPrompt:
    """Which of two items of the same task is better under the rubric: the order shown is the probe's variable."""
    task = first.research_run.task
    criteria = "\n".join(f"- {d['name']}: {' '.join(d['questions'])}" for d in rubric.score_dimensions)
    sections = [
        f"# Rubric: {rubric.name} (version {rubric.version})\n\n{rubric.instructions}",
        f"# The research task ({task.venue} {task.year or ''}: {task.slug})\n\n{task.description.strip()}",
        f"# The first {first.get_stage_display()}\n\n{_clip(first.content.strip(), MATERIAL_BUDGET) or '(empty)'}",
        f"# The second {second.get_stage_display()}\n\n{_clip(second.content.strip(), MATERIAL_BUDGET) or '(empty)'}",
        f"# What to judge\n\nWhich of the two is better overall, weighing these criteria:\n{criteria}",
        "# Your reply\n\nReply with one JSON object and nothing else:\n\n"
        f"```json\n{json.dumps(PAIRWISE_REPLY, indent=2)}\n```",
    ]
    return RenderedPrompt(system=system_prompt(note), user="\n\n".join(sections))
