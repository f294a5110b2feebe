"""The new-campaign form with 10,000 candidate items: server time and bytes of the page.

    python bench/campaign_form.py [--items 10000] [--repeats 10] [--compare REV]

A throw-away SQLite database is migrated and filled with --items candidate items: four fifths
finished research artifacts (a fifth per stage: idea, literature, proposal, experiment, paper; one
research run per five) and one fifth finished agent runs with a trajectory; plus 10 reviewers and a
rubric per stage. Each case is one untimed warm-up GET, then --repeats timed GETs through the whole
Django stack (middleware, permission, queries, template) with the test client, as an admin: server
time, no network, no browser. Reported: p50 / max server time, bytes, and the checkboxes the page
carries, for the form page (and, where the checkout has it, the candidate endpoint: a search and a
second page).

Then the campaign page (review:campaign_detail) of a paper campaign of 3 items, with papers added
until --items papers can join it: its "add items" picker (and, where the checkout has it, the
picker's endpoint: a search and a second page).

--compare REV measures the same cases on another revision in the same run (default: none): the
revision's files are extracted with `git archive` into a temporary folder (the repository is only
read) and this script runs there on a database of its own, filled the same way.
Goal (issue 33): the form page <= 1 s with 10,000 candidate items; the campaign page likewise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent


def _setup(root: Path, tmp: Path) -> None:
    sys.path.insert(0, str(root))
    os.chdir(root)
    os.environ["REFEREE_VAR_DIR"] = str(tmp / "var")
    os.environ["DEBUG"] = "0"
    os.environ.pop("DATABASE_URL", None)  # the default: SQLite (WAL) under REFEREE_VAR_DIR
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _fill(items: int) -> Any:
    from accounts.roles import ADMIN, REVIEWER
    from accounts.services import user_create
    from benchmark.models import AgentConfig, Artifact, ResearchRun, Run, Task
    from judge.models import Rubric

    stages = [s for s, _ in Artifact.Stage.choices]
    n_runs = items // 5
    n_research = (items - n_runs) // len(stages)
    tasks = Task.objects.bulk_create(
        Task(slug=f"iclr2025_task{i:03d}", version_hash=f"h{i}", kind=Task.Kind.MLR, title=f"Task {i}", is_current=True)
        for i in range(100)
    )
    gym = Task.objects.bulk_create(
        Task(slug=f"mlgym_task{i:02d}", version_hash=f"g{i}", kind=Task.Kind.MLGYM, title=f"Gym {i}", is_current=True)
        for i in range(20)
    )
    backbones = ["claude", "gemini", "o4-mini", "qwen", "deepseek"]
    research = ResearchRun.objects.bulk_create(
        ResearchRun(
            task=tasks[i % len(tasks)], backbone=backbones[i % len(backbones)], source=ResearchRun.Source.MLRBENCH
        )
        for i in range(n_research)
    )
    Artifact.objects.bulk_create(
        (Artifact(research_run=r, stage=s, content=f"{s} of {r.pk}") for r in research for s in stages),
        batch_size=2000,
    )
    owner = user_create(username="rita_owner", role="researcher")
    agents = [AgentConfig.objects.create(name=f"Agent{i}", model=f"anthropic:model-{i}") for i in range(5)]
    Run.objects.bulk_create(
        (
            Run(task=gym[i % len(gym)], agent=agents[i % len(agents)], owner=owner, method=f"method {i % 7}",
                status=Run.Status.FINISHED, step_count=10)
            for i in range(n_runs)
        ),
        batch_size=2000,
    )  # fmt: skip
    for i in range(10):
        user_create(username=f"reviewer{i}", role=REVIEWER)
    for stage in Rubric.Stage.values:
        Rubric.objects.create(stage=stage, version=1, name=stage, instructions="Judge it.")
    return user_create(username="ada_admin", role=ADMIN)


def _measure(client: Any, url: str, repeats: int) -> dict[str, Any]:
    client.get(url)
    times, body = [], b""
    for _ in range(repeats):
        start = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - start)
        assert response.status_code == 200, (url, response.status_code)
        body = response.content
    return {
        "url": url,
        "p50_ms": statistics.median(times) * 1000,
        "max_ms": max(times) * 1000,
        "bytes": len(body),
        "checkboxes": body.count(b'type="checkbox"'),
    }


def measure(root: Path, items: int, repeats: int) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        _setup(root, Path(tmp))
        from django.test import Client
        from django.urls import NoReverseMatch, reverse

        admin = _fill(items)
        client = Client()
        client.force_login(admin)
        new = reverse("review:campaign_create")
        cases = [_measure(client, new, repeats)]
        try:
            candidates = reverse("review:campaign_candidates")
        except NoReverseMatch:
            return cases
        cases.append(_measure(client, f"{candidates}?stage=paper&q=task04", repeats))
        cases.append(_measure(client, f"{candidates}?stage=trajectory&page=2", repeats))
        return cases + _campaign_cases(client, items, repeats)


def _campaign_cases(client: Any, items: int, repeats: int) -> list[dict[str, Any]]:
    """A paper campaign's page when `items` papers could join it (its add-items picker)."""
    from django.urls import NoReverseMatch, reverse

    from benchmark.models import Artifact, ResearchRun, Task
    from judge.models import Rubric
    from review.campaigns.services import campaign_create

    papers = Artifact.objects.filter(stage=Artifact.Stage.PAPER)
    missing = items + 3 - papers.count()
    tasks = list(Task.objects.filter(kind=Task.Kind.MLR))
    research = ResearchRun.objects.bulk_create(
        (ResearchRun(task=tasks[i % len(tasks)], backbone=f"extra{i % 9}", source=ResearchRun.Source.MLRBENCH)
         for i in range(max(missing, 0))),
        batch_size=2000,
    )  # fmt: skip
    Artifact.objects.bulk_create(
        (Artifact(research_run=r, stage=Artifact.Stage.PAPER, content="a paper") for r in research), batch_size=2000
    )
    campaign = campaign_create(
        name="bench", rubric=Rubric.objects.get(stage=Rubric.Stage.END_TO_END), artifacts=list(papers[:3]),
        status="draft",
    )  # fmt: skip
    cases = [_measure(client, reverse("review:campaign_detail", args=[campaign.code]), repeats)]
    try:
        rows = reverse("review:campaign_item_candidates", args=[campaign.code])
    except NoReverseMatch:
        return cases
    cases.append(_measure(client, f"{rows}?q=task04", repeats))
    cases.append(_measure(client, f"{rows}?page=2", repeats))
    return cases


def _print(label: str, cases: list[dict[str, Any]]) -> None:
    for c in cases:
        print(
            f"{label:<12} {c['url']:<76} p50 {c['p50_ms']:8.1f} ms  max {c['max_ms']:8.1f} ms  "
            f"{c['bytes']:>9,} bytes  {c['checkboxes']:>6} checkboxes"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--compare", default="", help="a git revision measured beside this checkout")
    parser.add_argument("--root", default=str(HERE), help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:  # one revision, in a process of its own (a Django process sets up once)
        print(json.dumps(measure(Path(args.root), args.items, args.repeats)))
        return
    runs = [("this", HERE)]
    with tempfile.TemporaryDirectory() as snap:
        if args.compare:
            archive = subprocess.run(["git", "-C", str(HERE), "archive", args.compare], check=True, capture_output=True)
            subprocess.run(["tar", "-x", "-C", snap], input=archive.stdout, check=True)
            runs.append((args.compare[:10], Path(snap)))
        print(
            f"new-campaign form and a campaign page, {args.items:,} candidate items, {args.repeats} timed GETs each"
            " (server time)"
        )
        for label, root in runs:
            out = subprocess.run(
                [sys.executable, __file__, "--json", "--root", str(root), "--items", str(args.items),
                 "--repeats", str(args.repeats)],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
            _print(label, json.loads(out.stdout.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()
