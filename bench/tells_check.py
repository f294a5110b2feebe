"""Benchmark: the campaign check for systematic tells (review.blinding.tells) on released MLGym trajectories.

Run: python bench/tells_check.py [--data ../shared/mlgym] [--runs N]

Reads N released .traj files (every model, in name order, a spread of tasks), then times the two
costs the check adds: extracting each run's features (every line of every thought, action and
output, normalised: what `campaign_check_tells` does per item when items are added), and the
reviewers' copy of one run's steps with the tells found cut or rewritten (`apply_text`, what the
item page pays per view). The detector runs over the runs grouped by model. No database: the
steps are read from the files as the importer would store them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from review.blinding import scrubbing, tells  # noqa: E402


def runs(root: Path, n: int) -> list[tuple[str, list[dict]]]:
    folders = sorted(f for f in (root / "trajectories" / "mlgym_bench_v0").iterdir() if next(f.glob("*.traj"), None))
    step = max(1, len(folders) // n)
    out = []
    for folder in folders[::step][:n]:
        traj = next(folder.glob("*.traj"), None)
        if traj is None:
            continue
        model = folder.name.split("__")[0]
        steps = json.loads(traj.read_text(encoding="utf-8", errors="replace")).get("trajectory") or []
        out.append((model, [{k: str(s.get(k) or "") for k in ("thought", "action", "observation")} for s in steps]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "mlgym"))
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args()
    loaded = runs(Path(args.data), args.runs)
    names = scrubbing.system_names(*{model for model, _ in loaded})
    lines = sum(len(s[f].splitlines()) for _, steps in loaded for s in steps for f in s)
    t0 = time.perf_counter()
    carried = []
    for model, steps in loaded:
        found: set[str] = set()
        for s in steps:
            found |= tells.text_features(s["thought"], names) | tells.text_features(s["observation"], names)
            found |= tells.text_features(s["action"], names, action=True)
        carried.append((model, found))
    features_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    found_tells = tells.detect(carried)
    detect_s = time.perf_counter() - t0
    # The reviewers' copy with every cuttable tell found, plus MLGym's header and workdir (the worst case).
    rules = {"lines": set(), "formats": {"file-header", "current-step"}, "paths": {"/home/agent/workspace"}}
    for tell in found_tells:
        if tell["key"].startswith("line:"):
            rules["lines"].add(tell["key"][5:])
    per_run = []
    for _, steps in loaded:
        t0 = time.perf_counter()
        for s in steps:
            for field in ("thought", "observation"):
                tells.apply_text(s[field], rules, names)
            tells.apply_text(s["action"], tells.action_rules(rules), names)
        per_run.append(time.perf_counter() - t0)
    models = sorted({m for m, _ in loaded})
    print(f"{len(loaded)} runs of {len(models)} models, {sum(len(s) for _, s in loaded)} steps, {lines} lines")
    print(f"features: {features_s:.2f} s in all, {1000 * features_s / len(loaded):.1f} ms per run")
    print(f"detect: {1000 * detect_s:.1f} ms; tells found: {len(found_tells)}")
    for tell in found_tells[:15]:
        print(f"  {tell['key'][:80]!r} {tell['system']} {tell['counts']}")
    print(
        f"reviewers' copy of one run: median {1000 * statistics.median(per_run):.1f} ms, max {1000 * max(per_run):.1f} ms"
    )


if __name__ == "__main__":
    main()
