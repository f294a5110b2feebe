"""Step notes: who may delete one, how the run page receives them, and their export file."""

from __future__ import annotations

from typing import Any

from accounts.roles import is_admin
from benchmark.models import Run, StepNote

NOTES_FORMAT = "referee-step-notes/1"


def can_delete_note(user: Any, note: StepNote, *, can_manage: bool) -> bool:
    return can_manage or is_admin(user) or (note.author_id is not None and note.author_id == user.pk)


def _note(note: StepNote) -> dict[str, Any]:
    return {
        "code": str(note.code),
        "step": note.step.index,
        "author": note.author.get_username() if note.author else None,
        "body": note.body,
        "tags": list(note.tags or []),
        "created_at": note.created_at.isoformat(),
    }


def _notes(run: Run) -> Any:
    return StepNote.objects.filter(run=run).select_related("step", "author").order_by("created_at", "id")


def notes_by_step(run: Run, *, user: Any, can_manage: bool) -> dict[str, list[dict[str, Any]]]:
    """{step index: [note, ...]} for the run page; each note says whether this user may delete it."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for note in _notes(run):
        entry = {**_note(note), "can_delete": can_delete_note(user, note, can_manage=can_manage)}
        grouped.setdefault(str(note.step.index), []).append(entry)
    return grouped


def notes_export(run: Run) -> dict[str, Any]:
    """The side file of a .traj export: notes keyed by the step index the trajectory uses."""
    return {
        "format": NOTES_FORMAT,
        "run": str(run.code),
        "task": run.task.slug,
        "notes": [_note(n) for n in _notes(run)],
    }
