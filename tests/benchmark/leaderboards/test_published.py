"""On a `make up` instance the leaderboard page, filtered to MLGym's 12 published models, shows
MLGym's published AUP table: every row to 3 decimals and tau_max, beside the published figures,
with the method set it used; where a board differs, the page says why."""

from __future__ import annotations

import csv
import io
import json
import re
from io import StringIO

import pytest

from benchmark import demo
from benchmark.leaderboards.mlgym_results import PUBLISHED_MODELS
from benchmark.leaderboards.published import PAPER, PUBLISHED_AUP, PUBLISHED_TAU_MAX
from benchmark.models import Run, Task
from tests.benchmark.leaderboards.test_aup_command import needs_mlgym_results
from tests.benchmark.leaderboards.test_pages import PAGE, aup_table, download, make_run

FILTER = {"methods": list(PUBLISHED_MODELS)}
ROW = re.compile(
    r'<tr data-method="(?P<method>[^"]+)">.*?<td class="num aup-attempt">(?P<attempt>[^<]*)</td>'
    r'<td class="num aup-submission">(?P<submission>[^<]*)</td>\s*<td class="num published" data-match="(?P<match>\w+)"',
    re.S,
)


@pytest.fixture
def instance(db):
    """The demo steps `make up` runs that put MLGym's data in (sandbox-free ones), in their order."""
    out = StringIO()
    for step in (
        demo.builtin_tasks_sync,
        demo.mlgym_tasks_sync,
        demo.mlgym_results_import,
        demo.mlgym_trajectories_import,
    ):
        step(out)
    assert Task.objects.filter(source="mlgym").exists()  # the loader's MLGym tasks came first
    return out.getvalue()


def page_rows(page: str) -> dict[str, tuple[str, str, str]]:
    return {m["method"]: (m["attempt"], m["submission"], m["match"]) for m in ROW.finditer(aup_table(page))}


@needs_mlgym_results
def test_it_reproduces_mlgyms_published_table_on_the_page(instance, client_for, researcher):
    client = client_for(researcher)
    response = client.get(PAGE, FILTER)
    assert response.status_code == 200
    page = response.content.decode()
    rows = page_rows(page)
    assert set(rows) == set(PUBLISHED_AUP)
    for method, published in PUBLISHED_AUP.items():  # the numbers a user reads, as rendered
        attempt, submission, match = rows[method]
        assert (float(attempt), float(submission)) == (published.best_attempt, published.best_submission), method
        assert match == "yes"
    assert f'id="tau-max">{PUBLISHED_TAU_MAX}<' in page
    assert "this board reproduces it to 3 decimals, &tau;<sub>max</sub> included" in page
    method_set = re.search(r'<span id="method-set">Method set: ([^<]*)\.</span>', page).group(1)
    assert set(method_set.split(", ")) == {*PUBLISHED_MODELS, "baseline"}
    assert page.count("<sup>P</sup>") == 1 + sum(r.source == PAPER for r in PUBLISHED_AUP.values())  # + the legend
    assert "baseline: imported" in aup_table(page) and "baseline: computed" not in aup_table(page)

    data = json.loads(client.get(download("json"), FILTER).content)
    assert (
        data["tau_max"] == PUBLISHED_TAU_MAX and data["published"]["matches"] and not data["published"]["explanations"]
    )
    assert {c["baseline_source"] for c in data["columns"].values()} == {"imported"}
    rows_csv = list(csv.DictReader(io.StringIO(client.get(download("csv"), FILTER).content.decode())))
    for row in rows_csv:
        published = PUBLISHED_AUP[row["method"]]
        assert round(float(row["aup_best_attempt"]), 3) == published.best_attempt
        assert round(float(row["aup_best_submission"]), 3) == published.best_submission
        assert float(row["tau_max"]) == PUBLISHED_TAU_MAX

    # The unfiltered board (other method sets) offers the published one, never a false comparison.
    unfiltered = client.get(PAGE).content.decode()
    assert 'id="published-comparison"' not in unfiltered and 'id="published-link"' in unfiltered


@needs_mlgym_results
def test_it_says_why_a_board_with_referee_runs_differs_from_the_published_one(instance, client_for, researcher):
    blotto = Task.objects.get(slug="blotto", is_current=True)  # MLGym's own task: MLGym's column
    make_run(blotto, method="gpt-o1", owner=researcher, attempt=9.0, submission=9.0)
    client = client_for(researcher)
    data = json.loads(client.get(download("json"), FILTER).content)
    assert not data["published"]["matches"]
    assert any(
        "1 Referee run(s) are ranked with MLGym's released ones" in line for line in data["published"]["explanations"]
    )
    page = client.get(PAGE, FILTER).content.decode()
    assert "this board differs" in page and "imported from MLGym only" in page
    assert page_rows(page)["gpt-o1"][2] == "no"
    only_mlgym = json.loads(client.get(download("json"), {**FILTER, "source": Run.Source.MLGYM}).content)
    assert only_mlgym["published"]["matches"]
