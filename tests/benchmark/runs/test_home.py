"""A researcher's home: an overview of their own work, counted from the database; the anonymous
visitor's sign-in page says what Referee is."""

from __future__ import annotations

import pytest

from benchmark.models import Run
from benchmark.runs.services import run_share
from tests.benchmark.runs_support import make_run

pytestmark = pytest.mark.django_db


def test_it_gives_a_researcher_an_overview_of_their_own_work_only(researcher, other_researcher, client_for):
    make_run(owner=researcher, status=Run.Status.FINISHED, cost=0.25, exit_status="submitted")
    make_run(owner=researcher, status=Run.Status.FAILED, cost=0.5, exit_status="exit_api")
    make_run(owner=researcher, status=Run.Status.RUNNING)
    theirs = make_run(owner=other_researcher, status=Run.Status.FINISHED, cost=9.0)
    make_run(owner=None, status=Run.Status.FINISHED, source=Run.Source.MLGYM)  # released: not their work
    run_share(run=theirs, user=researcher)
    response = client_for(researcher).get("/")
    assert response.status_code == 200
    overview = response.context["overview"]
    assert (overview["total"], overview["active"], overview["finished"], overview["failed"]) == (3, 1, 1, 1)
    assert overview["cost"] == pytest.approx(0.75) and overview["shared"] == 1
    assert len(overview["latest"]) == 3 and theirs not in overview["latest"]
    page = response.content.decode()
    assert "$0.75" in page and "stopped: the model&#x27;s API failed" in page


def test_it_tells_the_anonymous_visitor_what_referee_is(client_for):
    page = client_for(None).get("/", follow=True).content.decode()
    assert "Referee referees AI research agents" in page and 'name="password"' in page
