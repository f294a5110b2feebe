"""Numbers on run pages: scores rounded for reading, the exact value kept for the hover title."""

from __future__ import annotations

import math

from django import template

register = template.Library()


def score_text(value: float | None) -> str:
    """Four decimals for |x| >= 1, four significant digits below; trailing zeros dropped.

    static/js/run.js formats live updates with the same rule (formatScore)."""
    if value is None:
        return "–"
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    decimals = 4 if abs(value) >= 1 else min(12, 3 - math.floor(math.log10(abs(value))))
    text = f"{value:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


@register.inclusion_tag("benchmark/_score.html")
def score(value: float | None) -> dict:
    """A rounded score inside a span whose title is the exact value (a dash when there is none)."""
    if value is None:
        return {"missing": True}
    return {"missing": False, "exact": repr(float(value)), "text": score_text(value)}


@register.inclusion_tag("benchmark/_exit_words.html")
def exit_words(value: str | None) -> dict:
    """A run's exit status in words, its stored (MLGym) value as the hover title."""
    from benchmark.runs.exits import exit_text

    if not value:
        return {"missing": True}
    return {"missing": False, "stored": value, "text": exit_text(value)}


# What an import stores as the method of a trajectory whose file names no model (benchmark.runs.released).
UNNAMED_METHOD = "unknown"


@register.filter
def method_words(value: str) -> str:
    """A leaderboard method as people read it: the unnamed import's placeholder said in words."""
    if value == UNNAMED_METHOD:
        return "model not named (imported trajectories whose files name none)"
    return value
