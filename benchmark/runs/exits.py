"""A run's exit status in words for people. The stored value keeps MLGym's vocabulary (exit_cost,
autosubmission (max_steps), ...), which the leaderboards compare with MLGym's released runs and
downloads carry; pages show these words, with the stored value as the hover title."""

from __future__ import annotations

WORDS = {
    "submitted": "submitted",
    "autosubmission (max_steps)": "submitted automatically at the step limit",
    "max_steps": "stopped at the step limit",
    "exit_cost": "stopped at the cost limit",
    "exit_context": "stopped: the model's context was full",
    "exit_format": "stopped: replies the harness could not read",
    "exit_api": "stopped: the model's API failed",
    "exit_error": "stopped by an error",
    "exit_cancelled": "cancelled",
    "interrupted": "interrupted (a fault outside the run)",
}


def exit_text(value: str | None) -> str:
    """Words for a stored exit status; an unknown one (an import's own) as it is, "–" for none."""
    if not value:
        return "–"
    if value in WORDS:
        return WORDS[value]
    if value.startswith("autosubmission (") and value.endswith(")"):  # MLGym's other autosubmissions
        return f"submitted automatically ({value[len('autosubmission (') : -1].replace('_', ' ')})"
    return value
