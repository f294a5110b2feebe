"""Trajectory items: an agent run (MLGym-style) reviewed step by step, blinded like a paper.

What a reviewer gets of a run: per step its thought, action, output and the validation or
submission score it produced, with every system name scrubbed (review.blinding, the campaign's
names), every identifier of the run (run, agent and replay codes, the import folder and file, the
owner) replaced, and recorded costs hidden. Never shown: the agent's name, model and endpoint,
tokens, costs, timings, links to the run or its task runs, judge scores.

Per-step error tags are part of the review draft (Review.step_tags): `clean_step_tags` is the one
place that says what a valid tag list is, for the autosave, the form post and the submit.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import models

from benchmark.models import Run, Score, Step
from review.blinding import blinded, scrubbing, tells

FIELD_MAX = 20_000  # characters of one step's thought, action or output shown; a cut is said in the page
HIDDEN_ID = "[id]"
NOTE_MAX = 500
MAX_TAGS = 300


class StepTag(models.TextChoices):
    WRONG_TOOL = "wrong_tool", "wrong tool"
    LOOP = "loop", "loop"
    FABRICATED_CLAIM = "fabricated_claim", "fabricated claim"
    DATA_LEAKAGE = "data_leakage", "data leakage"
    OTHER = "other", "other"


class Severity(models.TextChoices):
    MINOR = "minor", "minor"
    MAJOR = "major", "major"
    CRITICAL = "critical", "critical"


def run_identifiers(run: Run) -> list[str]:
    """Strings that point at this run rather than name a system: codes, import folder and file, owner."""
    ids = [str(run.code), str(run.agent.code)]
    if run.replay_of_id:
        ids.append(str(run.replay_of.code))
    if run.group_id:
        ids.append(str(run.group.code))
    if run.owner_id:
        ids.append(run.owner.get_username())
    params = run.params or {}
    for key in ("mlgym_folder", "import_key"):
        if isinstance(params.get(key), str):
            ids.append(params[key])
    imported = params.get("import") or {}
    if isinstance(imported, dict):
        ids += [str(imported[k]) for k in ("file", "folder") if isinstance(imported.get(k), str)]
    return sorted({i for i in ids if len(i) >= 4}, key=len, reverse=True)


def _hide_ids(text: str, ids: list[str]) -> str:
    if not ids or not text:
        return text
    return re.sub("|".join(re.escape(i) for i in ids), HIDDEN_ID, text, flags=re.IGNORECASE)


def blind_text(text: str, names: list[str], ids: list[str], rules: dict[str, set[str]] | None = None) -> str:
    """One field of a step as a reviewer reads it: the campaign's tells cut or rewritten (review.blinding.tells),
    identifiers replaced, names scrubbed, costs hidden."""
    text = tells.apply_text(text or "", rules, names) if rules else text or ""
    return blinded.scrub_supplementary(_hide_ids(text, ids), names)


def _cut(text: str) -> tuple[str, int]:
    if len(text) <= FIELD_MAX:
        return text, 0
    return text[:FIELD_MAX], len(text) - FIELD_MAX


def blinded_steps(item: Any) -> list[dict[str, Any]]:
    """The item's run, step by step, as the reviewer sees it (item: a trajectory CampaignItem)."""
    run = item.run
    names = scrubbing.item_system_names(item)
    ids = run_identifiers(run)
    rules = tells.text_rules(item.campaign)
    scores: dict[int, list[dict[str, Any]]] = {}
    for score in Score.objects.filter(run=run, step__isnull=False).order_by("created_at", "id"):
        scores.setdefault(score.step_id, []).append(
            {
                "kind": score.get_kind_display(),
                "primary": score.primary,
                "metrics": {
                    blind_text(str(k), names, ids): v
                    for k, v in (score.metrics or {}).items()
                    if isinstance(v, int | float) and not isinstance(v, bool)
                },
                "error": blind_text(score.error, names, ids),
            }
        )
    steps = []
    for step in Step.objects.filter(run=run).only("id", "index", "thought", "action", "observation").order_by("index"):
        entry: dict[str, Any] = {"index": step.index, "scores": scores.get(step.id, [])}
        for field in ("thought", "action", "observation"):
            kept = tells.action_rules(rules) if field == "action" else rules
            entry[field], entry[f"{field}_cut"] = _cut(blind_text(getattr(step, field), names, ids, kept))
        steps.append(entry)
    return steps


def trajectory_task(item: Any) -> dict[str, str]:
    """The task the agent worked on (shared by every system's run, so not a tell), blinded all the same."""
    task = item.run.task
    names = scrubbing.item_system_names(item)
    ids = run_identifiers(item.run)
    return {"title": blind_text(task.title, names, ids), "description": blind_text(task.description, names, ids)}


def clean_step_tags(value: Any, step_count: int) -> list[dict[str, Any]]:
    """The step tags of a draft, validated: [{step, tag, severity, note}], one per (step, tag).

    Raises ValueError naming the first bad entry by position (the caller says it to the reviewer).
    """
    if value in (None, ""):
        return []
    if not isinstance(value, list):
        raise ValueError("step_tags: expected a list")
    if len(value) > MAX_TAGS:
        raise ValueError(f"step_tags: at most {MAX_TAGS} tags")
    out: list[dict[str, Any]] = []
    seen: set[tuple[int, str]] = set()
    for n, entry in enumerate(value, start=1):
        where = f"step_tags[{n}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: expected an object")
        step = entry.get("step")
        if isinstance(step, str) and step.isdigit():
            step = int(step)
        if not isinstance(step, int) or isinstance(step, bool) or not 1 <= step <= step_count:
            raise ValueError(f"{where}: step must be a step number 1..{step_count} (got {entry.get('step')!r})")
        tag, severity = entry.get("tag"), entry.get("severity")
        if tag not in StepTag.values:
            raise ValueError(f"{where}: tag must be one of {', '.join(StepTag.values)} (got {tag!r})")
        if severity not in Severity.values:
            raise ValueError(f"{where}: severity must be one of {', '.join(Severity.values)} (got {severity!r})")
        note = entry.get("note") or ""
        if not isinstance(note, str) or len(note) > NOTE_MAX:
            raise ValueError(f"{where}: note must be text of at most {NOTE_MAX} characters")
        if (step, tag) in seen:
            raise ValueError(f"{where}: step {step} already has the tag {tag}")
        seen.add((step, tag))
        out.append({"step": step, "tag": tag, "severity": severity, "note": note.strip()})
    return sorted(out, key=lambda t: (t["step"], t["tag"]))


def step_tags_text(tags: list[dict[str, Any]]) -> str:
    """One cell of the CSV export: "3:loop:major; 7:fabricated_claim:critical (note)"."""
    parts = []
    for t in tags or []:
        note = f" ({t['note']})" if t.get("note") else ""
        parts.append(f"{t['step']}:{t['tag']}:{t['severity']}{note}")
    return "; ".join(parts)


POST_PREFIX = "steptag_"  # form fields steptag_<step>_<tag> = severity (the no-JavaScript path)
NOTE_PREFIX = "steptagnote_"  # and steptagnote_<step>_<tag> = the tag's note


def _posted(post: Any) -> dict[tuple[Any, str], dict[str, str]]:
    """(step, tag) -> {severity, note} as posted, unvalidated; steps as ints where they are digits."""
    found: dict[tuple[Any, str], dict[str, str]] = {}
    for key, value in post.items():
        for prefix, part in ((POST_PREFIX, "severity"), (NOTE_PREFIX, "note")):
            if key.startswith(prefix):
                step, _, tag = key.removeprefix(prefix).partition("_")
                step = int(step) if step.isdigit() else step
                found.setdefault((step, tag), {"severity": "", "note": ""})[part] = value or ""
    return found


def step_tags_from_post(post: Any, step_count: int) -> list[dict[str, Any]]:
    """The step tags of a posted review form, validated like the autosave's. A note on a tag left at
    "no" is refused (ValueError), not dropped: the reviewer chooses a severity or clears the note."""
    raw = []
    for (step, tag), entry in _posted(post).items():
        if not entry["severity"]:
            if entry["note"].strip():
                raise ValueError(f"step {step}, {tag.replace('_', ' ')}: a note needs a severity (or clear the note)")
            continue
        raw.append({"step": step, "tag": tag, "severity": entry["severity"], "note": entry["note"]})
    return clean_step_tags(raw, step_count)


def step_tags_as_posted(post: Any) -> list[dict[str, Any]]:
    """What a refused form post held, to show it again as typed (nothing the reviewer wrote is lost)."""
    return [{"step": step, "tag": tag, **entry} for (step, tag), entry in _posted(post).items()]


def trajectory_context(item: Any, tags: list[dict[str, Any]]) -> dict[str, Any]:
    """What the reviewer's page (and the admin's preview) shows of a trajectory item."""
    current = {(t["step"], t["tag"]): t for t in tags or []}
    steps = blinded_steps(item)
    for step in steps:
        rows = []
        for value, label in StepTag.choices:
            tag = current.get((step["index"], value)) or {}
            rows.append(
                {
                    "tag": value,
                    "label": label,
                    "name": f"{POST_PREFIX}{step['index']}_{value}",
                    "note_name": f"{NOTE_PREFIX}{step['index']}_{value}",
                    "note": tag.get("note") or "",
                    "options": [(s, s_label, tag.get("severity") == s) for s, s_label in Severity.choices],
                }
            )
        step["tag_rows"] = rows
        step["tagged"] = sum(bool((current.get((step["index"], v)) or {}).get("severity")) for v in StepTag.values)
    return {"task": trajectory_task(item), "steps": steps, "note_max": NOTE_MAX}
