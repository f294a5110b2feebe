"""Two workers assigning the same campaign at once never double-assign.

Threads share the test database (transaction=True so each thread commits for real); processes
share it too (DATABASE_URL, see tests/processes.py). Both run on PostgreSQL only (marker `postgres`,
a failure if skipped in CI): SQLite lets one writer in at a time, so there these tests pass even with
the campaign lock and both unique constraints of Assignment removed; on PostgreSQL that mutation
assigns every item three or four times over.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from django.db import connection

from review.assignment.services import campaign_assign
from review.campaigns.services import campaign_create
from review.models import Assignment
from tests.processes import SHELL, process_database
from tests.review.factories import make_paper, make_reviewer, make_rubric


def _check_invariants(rows: list[tuple[int, int, int, str]], k: int, n_items: int) -> None:
    live = [(item, reviewer, slot) for item, reviewer, slot, status in rows if status in Assignment.LIVE]
    pairs = [(item, reviewer) for item, reviewer, _ in live]
    assert len(pairs) == len(set(pairs)), "a reviewer twice on an item"
    per_item = Counter(item for item, _, _ in live)
    assert len(per_item) == n_items and set(per_item.values()) == {k}, per_item


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_never_double_assigns_when_threads_assign_at_once() -> None:
    papers = [make_paper() for _ in range(12)]
    reviewers = [make_reviewer(f"t{i}") for i in range(5)]
    campaign = campaign_create(
        name="race", rubric=make_rubric(), artifacts=papers, reviewers=reviewers, reviewers_per_item=2
    )
    barrier = threading.Barrier(4)
    results, errors = [], []

    def worker() -> None:
        try:
            barrier.wait()
            results.append(campaign_assign(campaign=campaign))
        except Exception as exc:  # surfaced by the assertion below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sum(r.created for r in results) == 24
    rows = list(Assignment.objects.values_list("item_id", "reviewer_id", "slot", "status"))
    _check_invariants(rows, k=2, n_items=12)


SEED = """
from tests.review.factories import make_paper, make_reviewer, make_rubric
from review.campaigns.services import campaign_create
papers = [make_paper() for _ in range(30)]
reviewers = [make_reviewer(f"p{i}") for i in range(7)]
campaign_create(name="race", rubric=make_rubric(), artifacts=papers, reviewers=reviewers, reviewers_per_item=3)
"""

WORKER = """
import os, time
from review.models import Campaign
from review.assignment.services import campaign_assign
start = float(os.environ["ASSIGN_START"])
time.sleep(max(0.0, start - time.time()))
print(campaign_assign(campaign=Campaign.objects.get(name="race")).created)
"""


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)  # on PostgreSQL the processes share this test's database
def test_it_never_double_assigns_when_processes_assign_at_once(tmp_path: Path) -> None:
    db = process_database(tmp_path)
    db.shell(SEED)
    start = time.time() + 2.0  # every worker is up and waiting before the start line
    procs = [db.popen([*SHELL, WORKER], ASSIGN_START=str(start)) for _ in range(3)]
    created = []
    for p in procs:
        out, _ = p.communicate(timeout=120)
        assert p.returncode == 0, out
        created.append(int(out.strip().splitlines()[-1]))
    assert sum(created) == 90
    rows = db.rows("select item_id, reviewer_id, slot, status from review_assignment")
    _check_invariants(rows, k=3, n_items=30)
