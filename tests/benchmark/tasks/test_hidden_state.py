"""No hidden state leaks through the protocol (issue #28 item 8), through the real evaluation.

Run once against the old evaluators (small master seeds, the player's seed drawn from the
opponents' stream, heuristic time free; git stash of this change), these tests failed: the
seed-tabulation strategy scored 1.0 at Colonel Blotto on the test split against the starter's
0.144, and 2.348 at the Prisoner's Dilemma against tit for tat's 2.233 by defecting in every
match's hidden last round; the solve-inside-the-call "heuristic" scored 24.1 decisions against
31.1 for the same branching rule used plainly. The attacks: tests/benchmark/hidden_state_attacks.py.
"""

from __future__ import annotations

import pytest

from benchmark.tasks.evaluation import artifacts_evaluate
from benchmark.tasks.loader import BUILTIN_DIR, task_sync
from tests.benchmark.expected_scores import EXPECTED
from tests.benchmark.hidden_state_attacks import JW, SOLVE_INSIDE, seed_tabulation

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("slug", ["colonel_blotto", "prisoners_dilemma"])
def test_it_gives_a_seed_tabulating_strategy_the_starters_honest_score(slug, task_backend):
    task = task_sync(BUILTIN_DIR / slug)
    result = artifacts_evaluate(task=task, artifacts={"strategy.py": seed_tabulation(slug)}, split="test")
    assert result.error == "", result.error + result.output
    # It recognised no seed, so it played the starter strategy move for move: no opponent's
    # allocation and no match length was predicted.
    assert result.primary == pytest.approx(EXPECTED[slug]()["test"], rel=1e-12)


def test_it_keeps_the_opponents_streams_apart_from_the_handed_seeds():
    """The seeds handed to the player come from a secret of their own, apart from the one behind the
    opponents' draws, and both are far beyond any tabulation."""
    from tests.benchmark.expected_scores import module

    for slug in ("colonel_blotto", "prisoners_dilemma", "battle_of_sexes"):
        opponents = module(BUILTIN_DIR / slug / "evaluator" / "opponents.py", f"hidden_{slug}")
        for split in ("dev", "test"):
            secret, player_secret = opponents.SECRETS[split], opponents.PLAYER_SECRETS[split]
            assert secret != player_secret and min(secret, player_secret) > 2**100
        assert set(opponents.SECRETS.values()).isdisjoint(opponents.PLAYER_SECRETS.values())


def test_it_charges_a_heuristic_that_solves_the_formula_inside_its_call(task_backend):
    task = task_sync(BUILTIN_DIR / "sat_solver")
    plain = artifacts_evaluate(task=task, artifacts={"heuristic.py": JW.encode()}, split="test")
    inside = artifacts_evaluate(task=task, artifacts={"heuristic.py": SOLVE_INSIDE.encode()}, split="test")
    assert plain.error == "" and inside.error == "", plain.error + inside.error + inside.output
    assert inside.primary > plain.primary
    # It does lead the counted solver with fewer decisions; its searches are what it pays for.
    assert inside.metrics["solver_decisions"] < plain.metrics["solver_decisions"]
    assert inside.metrics["heuristic_ms"] > plain.metrics["heuristic_ms"]
    assert inside.metrics["time_charge"] > 0
    for result in (plain, inside):
        metrics = result.metrics
        assert metrics["Decisions"] == pytest.approx(metrics["solver_decisions"] + metrics["time_charge"])
