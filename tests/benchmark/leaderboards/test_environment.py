"""The board groups and filters runs by what they ran on (Run.environment); imported results read
as "MLGym release"."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from benchmark.models import Run, Task
from tests.benchmark.leaderboards.test_pages import PAGE, aup_table, download, make_run

CELL = reverse("benchmark:leaderboard_cell")


@pytest.fixture
def task(db) -> Task:
    return Task.objects.create(
        slug="toy-accuracy",
        version_hash="0" * 64,
        kind=Task.Kind.MLGYM,
        title="Toy",
        metric="acc",
        baseline_scores={"acc": 0.5},
    )


def environment(image: str, digest: str) -> dict:
    return {
        "image": image,
        "image_digest": digest,
        "task_hash": "t1",
        "dataset_hash": "d1",
        "evaluator_hash": "e1",
        "network": "none",
    }


def test_it_groups_and_filters_rows_by_environment(client_for, researcher, task):
    old = make_run(task, method="rita-agent", owner=researcher, attempt=0.7, environment=environment("img:1", "sha1"))
    new = make_run(task, method="rita-agent", owner=researcher, attempt=0.9, environment=environment("img:2", "sha2"))
    bare = make_run(task, method="rita-agent", owner=researcher, attempt=0.6)  # a run from before environments
    imported = make_run(task, method="gpt-o1", attempt=0.8, source=Run.Source.MLGYM)
    client = client_for(researcher)

    grouped = json.loads(client.get(download("json"), {"group_by": "image"}).content)
    assert set(grouped["methods"]) == {
        "rita-agent · image=img:1",
        "rita-agent · image=img:2",
        "rita-agent · image not recorded",
        "gpt-o1 · MLGym release",
        "baseline",
    }
    scores = grouped["scores"]["toy-accuracy"]
    assert scores["rita-agent · image=img:1"]["best_attempt"] == 0.7
    assert scores["rita-agent · image=img:2"]["best_attempt"] == 0.9
    assert grouped["published"] is None

    only = json.loads(client.get(download("json"), {"environment": "image_digest=sha2"}).content)
    assert set(only["methods"]) == {"rita-agent", "baseline"}
    assert only["scores"]["toy-accuracy"]["rita-agent"]["best_attempt"] == 0.9
    release = json.loads(client.get(download("json"), {"environment": "MLGym release"}).content)
    assert set(release["methods"]) == {"gpt-o1", "baseline"}

    page = client.get(PAGE, {"group_by": "image"}).content.decode()
    assert 'value="image=img:1"' in page and 'value="MLGym release"' in page  # the filter's choices
    table = aup_table(page)
    assert "rita-agent · image=img:2" in table and "env=image%3Dimg%3A2" in table
    cell = client.get(CELL, {"group_by": "image", "method": "rita-agent", "env": "image=img:2"}).content.decode()
    assert str(new.code) in cell and str(old.code) not in cell and str(bare.code) not in cell
    assert str(imported.code) in client.get(CELL, {"env": "MLGym release"}).content.decode()
    assert client.get(PAGE, {"group_by": "owner"}).status_code == 400
    assert client.get(PAGE, {"environment": "image=nope"}).status_code == 400
