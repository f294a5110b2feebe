"""Each built-in baseline's score computed without the evaluator: from the task's rules, its
opponents and instances, or sklearn / numpy on the same split. Compared exactly (to float
rounding) with what the isolated evaluation stores, not with a wide range.

The game schedules (seeds, rounds, matches) are restated here from each task's README and
evaluator: a change to them has to change this file too, on purpose.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
import random
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from benchmark.tasks.loader import BUILTIN_DIR
from sandbox import SandboxSpec, open_session

Scores = dict[str, float]

# The SAT task's Decisions also charges the heuristic's thinking time (see its evaluator), which
# depends on how busy the machine is at that moment: what an independent computation reproduces
# exactly is the count alone. TIMED metrics are never compared between two runs.
COUNTED = {"sat_solver": "solver_decisions"}
TIMED = {"sat_solver": frozenset({"Decisions", "time_charge", "heuristic_ms", "calls"})}


def counted(slug: str, metric: str, metrics: dict[str, Any]) -> float:
    """The metric of a task's run that EXPECTED states: the primary one, or its counted part."""
    return metrics[COUNTED.get(slug, metric)]


def module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    loaded = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, loaded)
    spec.loader.exec_module(loaded)
    return loaded


def starter(slug: str, file: str, function: str) -> Any:
    return getattr(module(BUILTIN_DIR / slug / "workspace" / file, f"expected_{slug}_{file[:-3]}"), function)


def _seeded(strategy: Any, seed: int, *args: Any) -> Any:
    # The evaluator seeds the submission's `random` before every call (runtime/driver.py).
    random.seed(seed)
    return json.loads(json.dumps(strategy(*args)))  # and every value travels as JSON


def derived(secret: int, *place: object) -> int:
    # 128 bits of SHA-256 of the secret and the match's place in the schedule.
    return int.from_bytes(hashlib.sha256(repr((secret, *place)).encode()).digest()[:16], "big")


def _matches(slug: str, *, rounds: Any, payoff: Any) -> Scores:
    """Mean payoff per round of the starter strategy against the split's pool: per opponent
    MATCHES_PER_OPPONENT matches, each with its own opponent rng (and match length, where it
    varies) derived from the split's secret, and a strategy seed derived from a second secret."""
    opponents = module(BUILTIN_DIR / slug / "evaluator" / "opponents.py", f"expected_{slug}_opponents")
    strategy = starter(slug, "strategy.py", "row_strategy")
    scores = {}
    for split in ("dev", "test"):
        secret, player_secret = opponents.SECRETS[split], opponents.PLAYER_SECRETS[split]
        total = played = 0
        for index, opponent in enumerate(opponents.POOLS[split]):
            for match in range(opponents.MATCHES_PER_OPPONENT):
                length = rounds(random.Random(derived(secret, "length", index, match)), opponents)
                rng = random.Random(derived(secret, "opponent", index, match))
                seed = derived(player_secret, index, match) >> 64
                history: list[list[Any]] = []
                for _ in range(length):
                    mine = _seeded(strategy, seed + len(history), history)
                    theirs = opponent([[b, a] for a, b in history], rng)
                    total += payoff(opponents, mine, theirs)
                    played += 1
                    history.append([mine, theirs])
        scores[split] = total / played
    return scores


def prisoners_dilemma() -> Scores:
    # 8 to 12 rounds a match (unknown to the player); the row player's payoff of the table.
    return _matches(
        "prisoners_dilemma",
        rounds=lambda lengths, o: lengths.randint(8, 12),
        payoff=lambda o, mine, theirs: o.PAYOFF[(mine, theirs)][0],
    )


def battle_of_sexes() -> Scores:
    return _matches(
        "battle_of_sexes",
        rounds=lambda lengths, o: o.ROUNDS,
        payoff=lambda o, mine, theirs: o.payoff(mine, theirs)[0],
    )


def _blotto(o: ModuleType, mine: list[int], theirs: list[int]) -> int:
    # +1 for winning more battlefields than the opponent, -1 for fewer, 0 for a tie.
    wins = sum(a > b for a, b in zip(mine, theirs, strict=True))
    losses = sum(a < b for a, b in zip(mine, theirs, strict=True))
    return (wins > losses) - (wins < losses)


def colonel_blotto() -> Scores:
    return _matches("colonel_blotto", rounds=lambda lengths, o: o.ROUNDS, payoff=_blotto)


def sat_solver() -> Scores:
    # The public solver (workspace/solver.py) is the evaluator's algorithm; the instances are
    # random 3-SAT at ratio 4.26 from the split's seed; capped runs count 20,000 decisions.
    # The count alone: the evaluator's `solver_decisions` (COUNTED).
    solver = module(BUILTIN_DIR / "sat_solver" / "workspace" / "solver.py", "expected_sat_solver")
    heuristic = starter("sat_solver", "heuristic.py", "heuristic_fn")
    scores = {}
    for split, (seed, count) in {
        "dev": (0xF7FBFC50B6B07DE71437DFDAFAF09105, 12),
        "test": (0xDC9AAF2D6443B8BCC8D4622C437E83D9, 16),
    }.items():
        rng = random.Random(seed)
        formulas = []
        for _ in range(count):
            n = rng.randint(50, 60)
            formulas.append(solver.random_3sat(rng, n, round(4.26 * n)))
        total = 0
        for formula in formulas:
            try:
                _, decisions = solver.solve(formula, lambda c, a: json.loads(json.dumps(heuristic(c, a))))
            except solver.DecisionLimit:
                decisions = 20_000
            total += decisions
        scores[split] = total / count
    return scores


MOUNTAIN_CAR = """
import json
import gymnasium as gym
import numpy as np
from policy import act

scores = {}
for split, seeds in {"dev": range(1000, 1010), "test": range(7000, 7020)}.items():
    env = gym.make("MountainCarContinuous-v0")
    totals = []
    for seed in seeds:
        observation, _ = env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            action = float(np.clip(act([float(x) for x in observation]), -1.0, 1.0))
            observation, reward, terminated, truncated, _ = env.step(np.array([action], dtype=np.float32))
            total += float(reward)
            done = terminated or truncated
        totals.append(total)
    scores[split] = float(np.mean(totals))
print(json.dumps(scores))
"""


def _in_sandbox(files: dict[str, bytes], command: str) -> Any:
    """Run a test-written script in a plain sandbox (the image has gymnasium and sklearn)."""
    with open_session(SandboxSpec(network=False)) as session:
        for name, data in files.items():
            session.put_file(name, data)
        result = session.run(command, timeout=300)
    assert result.exit_code == 0, result.output
    return json.loads(result.output.strip().splitlines()[-1])


def mountain_car_continuous() -> Scores:
    policy = (BUILTIN_DIR / "mountain_car_continuous" / "workspace" / "policy.py").read_bytes()
    return _in_sandbox({"policy.py": policy, "expected.py": MOUNTAIN_CAR.encode()}, "python3 expected.py")


DIGITS = """
import json
import pandas as pd
from sklearn.linear_model import LogisticRegression

train = pd.read_csv("train.csv")
pixels = [c for c in train.columns if c.startswith("pixel_")]
model = LogisticRegression(max_iter=200).fit(train[pixels] / 16.0, train["label"])
rows = pd.concat([pd.read_csv("dev.csv"), pd.read_csv("test.csv")])
print(json.dumps({str(i): int(p) for i, p in zip(rows["id"], model.predict(rows[pixels] / 16.0))}))
"""


def _labels(slug: str, split: str, column: str) -> dict[str, str]:
    with open(BUILTIN_DIR / slug / "evaluator" / f"labels_{split}.csv", newline="") as handle:
        return {row["id"]: row[column] for row in csv.DictReader(handle)}


def digits_classification() -> Scores:
    data = BUILTIN_DIR / "digits_classification" / "workspace" / "data"
    files = {f"{split}.csv": (data / f"{split}.csv").read_bytes() for split in ("train", "dev", "test")}
    predicted = _in_sandbox({**files, "expected.py": DIGITS.encode()}, "python3 expected.py")
    scores = {}
    for split in ("dev", "test"):
        labels = _labels("digits_classification", split, "label")
        scores[split] = sum(predicted[key] == int(label) for key, label in labels.items()) / len(labels)
    return scores


def diabetes_rows(split: str) -> tuple[list[str], np.ndarray, np.ndarray | None]:
    with open(BUILTIN_DIR / "diabetes_regression" / "workspace" / "data" / f"{split}.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    features = [c for c in rows[0] if c not in ("id", "target")]
    x = np.array([[float(row[c]) for c in features] for row in rows])
    y = np.array([float(row["target"]) for row in rows]) if "target" in rows[0] else None
    return [row["id"] for row in rows], x, y


def r2(targets: dict[str, float], predictions: dict[str, float]) -> float:
    mean = sum(targets.values()) / len(targets)
    residual = sum((targets[k] - predictions[k]) ** 2 for k in targets)
    return 1 - residual / sum((v - mean) ** 2 for v in targets.values())


def diabetes_regression() -> Scores:
    # Ordinary least squares with an intercept, solved by numpy on the host (no sklearn).
    _, x, y = diabetes_rows("train")
    assert y is not None
    design = np.hstack([x, np.ones((len(x), 1))])
    coefficients, *_ = np.linalg.lstsq(design, y, rcond=None)
    scores = {}
    for split in ("dev", "test"):
        ids, features, _ = diabetes_rows(split)
        predictions = dict(zip(ids, np.hstack([features, np.ones((len(features), 1))]) @ coefficients, strict=True))
        targets = {k: float(v) for k, v in _labels("diabetes_regression", split, "target").items()}
        scores[split] = r2(targets, {k: float(v) for k, v in predictions.items()})
    return scores


EXPECTED = {
    "prisoners_dilemma": prisoners_dilemma,
    "battle_of_sexes": battle_of_sexes,
    "colonel_blotto": colonel_blotto,
    "sat_solver": sat_solver,
    "mountain_car_continuous": mountain_car_continuous,
    "digits_classification": digits_classification,
    "diabetes_regression": diabetes_regression,
}
