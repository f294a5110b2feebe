"""One leaderboard column per task, whatever the source: MLGym's task ids mapped to Referee's.

MLGym names its tasks in camelCase (`battleOfSexes`); Referee's built-in ports of the same games
use snake_case slugs (`battle_of_sexes`). Imported MLGym results keep MLGym's id (they ran on
MLGym's version of the task), so without this table the same game gets two columns. The table is
stated, not guessed from spelling: a port is listed only when it keeps MLGym's priority metric and
direction (3SATTime scores wall time, Referee's sat_solver counts decisions: not the same task).
A test checks every entry against `MLGYM_TASKS` and the built-in task folders.
"""

from __future__ import annotations

from collections.abc import Iterable

# MLGym task id -> slug of the Referee built-in task that is the same game, scored the same way.
MLGYM_TO_REFEREE: dict[str, str] = {
    "battleOfSexes": "battle_of_sexes",
    "prisonersDilemma": "prisoners_dilemma",
    "blotto": "colonel_blotto",
    "rlMountainCarContinuous": "mountain_car_continuous",
}

_ALIASES: dict[str, list[str]] = {}
for _mlgym, _referee in MLGYM_TO_REFEREE.items():
    _ALIASES.setdefault(_referee, [_referee]).append(_mlgym)


def task_column(slug: str) -> str:
    """The leaderboard column of a task slug: the Referee slug when the task is a mapped MLGym one."""
    return MLGYM_TO_REFEREE.get(slug, slug)


def column_slugs(columns: Iterable[str]) -> list[str]:
    """Every task slug whose runs belong in these columns (a column and the MLGym ids mapped to it)."""
    return sorted({slug for column in columns for slug in _ALIASES.get(column, [column])})


def column_aliases(column: str) -> list[str]:
    """The other names a column's runs carry (for the header's tooltip); empty for unmapped tasks."""
    return [slug for slug in _ALIASES.get(column, []) if slug != column]
