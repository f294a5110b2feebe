"""Run pages: the permission checklist, launch, cancel, share, downloads, escaping, the reaper."""

from __future__ import annotations

import json
import time
import uuid
from io import StringIO

import pytest
from django.core.management import call_command

from benchmark.models import AgentConfig, Run
from benchmark.runs import progress
from benchmark.runs.services import run_share, run_share_revoke
from tests.benchmark.runs_support import builtin_task, make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(researcher):
    run = make_run(owner=researcher, status=Run.Status.RUNNING)
    progress.step_append(
        run=run,
        thought="look <b>bold</b>",
        action="cat x\n",
        observation="\x1b[31mred</pre><script>alert(1)</script>\x1b[0m",
        publish=False,
    )
    return run


PAGES = ["", "log.txt", "export.traj"]


@pytest.mark.parametrize("page", PAGES)
def test_it_shows_run_pages_to_owner_sharer_and_admin_only(
    page, run, researcher, other_researcher, admin_user, reviewer, client_for
):
    url = f"/runs/{run.code}/{page}"
    assert client_for(researcher).get(url).status_code == 200
    assert client_for(admin_user).get(url).status_code == 200
    assert client_for(other_researcher).get(url).status_code == 404
    assert client_for(reviewer).get(url).status_code == 403
    anonymous = client_for(None).get(url)
    assert anonymous.status_code == 302 and "/accounts/login" in anonymous["Location"]
    assert client_for(researcher).get(f"/runs/{uuid.uuid4()}/{page}").status_code == 404
    assert client_for(researcher).post(url).status_code == 405
    run_share(run=run, user=other_researcher)
    assert client_for(other_researcher).get(url).status_code == 200
    run_share_revoke(run=run, user=other_researcher)
    withdrawn = client_for(other_researcher).get(url)
    assert withdrawn.status_code == 403 and b"access to this run was withdrawn" in withdrawn.content


def test_it_escapes_agent_output_in_the_page(run, researcher, client_for):
    page = client_for(researcher).get(f"/runs/{run.code}/").content.decode()
    assert "<script>alert(1)</script>" not in page and "<b>bold</b>" not in page
    start = page.index('id="initial-steps"')
    data = json.loads(page[page.index(">", start) + 1 : page.index("</script>", start)])
    assert data[0]["observation"] == "\x1b[31mred</pre><script>alert(1)</script>\x1b[0m"
    assert f'data-ws-path="/ws/runs/{run.code}/"' in page


def test_it_downloads_the_raw_log(run, researcher, client_for):
    response = client_for(researcher).get(f"/runs/{run.code}/log.txt")
    body = b"".join(response.streaming_content).decode()
    assert response["Content-Type"].startswith("text/plain")
    assert "===== step 1" in body and "cat x" in body and "alert(1)" in body


def test_it_lists_only_visible_runs(run, researcher, other_researcher, admin_user, reviewer, client_for):
    mine = make_run(owner=other_researcher)
    assert str(run.code) in client_for(researcher).get("/runs/").content.decode()
    assert str(mine.code) not in client_for(researcher).get("/runs/").content.decode()
    admin_page = client_for(admin_user).get("/runs/").content.decode()
    assert str(run.code) in admin_page and str(mine.code) in admin_page
    assert client_for(reviewer).get("/runs/").status_code == 403
    assert client_for(researcher).post("/runs/").status_code == 405


def test_it_lets_only_the_owner_or_an_admin_cancel(
    run, researcher, other_researcher, admin_user, reviewer, client_for, redis_client
):
    url = f"/runs/{run.code}/cancel/"
    yes = {"confirm": "yes"}
    run_share(run=run, user=other_researcher)
    assert client_for(other_researcher).post(url, yes).status_code == 403
    assert client_for(reviewer).post(url, yes).status_code == 403
    assert client_for(None).post(url, yes).status_code == 302
    assert client_for(researcher).get(url).status_code == 405
    assert client_for(researcher).post(f"/runs/{uuid.uuid4()}/cancel/", yes).status_code == 404
    assert client_for(researcher).post(url, yes).status_code == 302
    run.refresh_from_db()
    # Running: its worker stops it and says cancelled (benchmark.runs.services.run_cancel).
    assert run.status == Run.Status.CANCELLING and run.steps.count() == 1


def test_it_shares_read_access_with_a_researcher_only(run, researcher, other_researcher, reviewer, client_for):
    url = f"/runs/{run.code}/share/"
    client = client_for(researcher)
    client.post(url, {"username": reviewer.username})
    assert not run.shares.exists()
    client.post(url, {"username": other_researcher.username})
    client.post(url, {"username": other_researcher.username})  # twice: still one live share
    assert [s.user for s in run.shares.all()] == [other_researcher] and run.shares.get().shared_by == researcher
    assert client_for(other_researcher).post(url, {"username": "x"}).status_code == 403
    assert client_for(researcher).get(url).status_code == 405


def test_it_lets_only_the_owner_or_an_admin_revoke_a_share(
    run, researcher, other_researcher, admin_user, reviewer, client_for
):
    url = f"/runs/{run.code}/unshare/"
    run_share(run=run, user=other_researcher)
    page = client_for(researcher).get(f"/runs/{run.code}/").content.decode()
    assert 'id="shared-with"' in page and other_researcher.username in page
    who = {"username": other_researcher.username}
    assert client_for(other_researcher).post(url, who).status_code == 403  # a viewer cannot manage
    assert client_for(reviewer).post(url, who).status_code == 403
    assert client_for(None).post(url, who).status_code == 302
    assert client_for(researcher).get(url).status_code == 405
    assert client_for(researcher).post(f"/runs/{uuid.uuid4()}/unshare/", who).status_code == 404
    assert run.shares.get().is_live
    done = client_for(researcher).post(url, who, follow=True)
    assert done.status_code == 200 and b"can no longer watch this run" in done.content
    share = run.shares.get()
    assert not share.is_live and share.revoked_by == researcher
    for page in ("", "log.txt", "export.traj"):
        assert client_for(other_researcher).get(f"/runs/{run.code}/{page}").status_code == 403
    assert str(run.code) not in client_for(other_researcher).get("/runs/").content.decode()
    again = client_for(researcher).post(url, who, follow=True)
    assert b"not shared with that username" in again.content
    # Shared again after a revocation: a new live share, the old one stays as history.
    run_share(run=run, user=other_researcher)
    assert client_for(other_researcher).get(f"/runs/{run.code}/").status_code == 200
    assert run.shares.count() == 2
    assert client_for(admin_user).post(url, who).status_code == 302
    assert not run.shares.filter(revoked_at__isnull=True).exists()


def test_it_launches_one_job_per_run_after_commit(
    researcher, client_for, redis_client, django_capture_on_commit_callbacks
):
    import django_rq

    task = builtin_task("prisoners_dilemma")
    queue = django_rq.get_queue("runs")
    queue.empty()
    form = {
        "tasks": [task.pk],
        "agent_kind": "baseline",
        "temperature": 0,
        "top_p": 0.95,
        "history_window": 5,
        "n_runs": 3,
        "max_steps": 5,
        "cost_limit": 1,
        "command_timeout": 60,
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(researcher).post("/runs/launch/", form)
        assert queue.count == 0  # nothing is enqueued before the commit
    assert response.status_code == 302
    runs = Run.objects.filter(owner=researcher)
    assert runs.count() == 3 == queue.count
    # Several runs: the list of exactly these (their launch group), not the generic list.
    assert response["Location"] == f"/runs/?group={runs.first().group.code}"
    landing = client_for(researcher).get(response["Location"]).content.decode()
    assert 'id="group-banner"' in landing and landing.count('name="run" value=') == 3
    assert {r.params["max_steps"] for r in runs} == {5} and runs.first().agent.kind == AgentConfig.Kind.BASELINE
    # Its own name: "baseline" is the leaderboards' reference row (the task's computed score).
    assert {r.method for r in runs} == {"starter-code"} and runs.first().agent.name == "starter-code"
    queue.empty()


def test_it_explains_a_bad_launch(researcher, client_for, reviewer):
    page = client_for(researcher).post("/runs/launch/", {"agent_kind": "model", "model": "gpt-4o"}).content.decode()
    assert "This field is required" in page and "choose an endpoint and a model from the list" in page
    assert client_for(reviewer).get("/runs/launch/").status_code == 403
    assert client_for(researcher).get("/runs/launch/").status_code == 200


def test_it_replays_a_finished_run_as_a_new_run(run, researcher, client_for, redis_client):
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FINISHED)
    response = client_for(researcher).post(f"/runs/{run.code}/replay/")
    replay = Run.objects.get(replay_of=run)
    assert response["Location"] == f"/runs/{replay.code}/"
    assert replay.agent.kind == AgentConfig.Kind.REPLAY and replay.owner == researcher


def test_it_reaps_runs_whose_worker_is_gone_and_keeps_their_steps(run, researcher, redis_client, settings):
    import os
    import socket

    # The reaper trusts a missing heartbeat only once Redis has been up a whole TTL: early in a
    # session (this file run alone) it has not, so a short TTL, waited for.
    settings.RUN_HEARTBEAT_TTL = 1
    while float(redis_client.info("server")["uptime_in_seconds"]) < settings.RUN_HEARTBEAT_TTL:
        time.sleep(0.1)
    Run.objects.filter(pk=run.pk).update(worker_name="0123456789abcdef")  # an RQ worker no longer registered
    alive = make_run(owner=researcher, status=Run.Status.RUNNING, worker_name=f"{socket.gethostname()}:{os.getpid()}")
    out = StringIO()
    call_command("reap_runs", stdout=out)
    run.refresh_from_db()
    alive.refresh_from_db()
    assert run.status == Run.Status.INTERRUPTED and run.steps.count() == 1 and "0123456789abcdef" in run.error
    assert alive.status == Run.Status.RUNNING
    assert str(run.code) in out.getvalue()


def test_it_rounds_scores_on_run_pages_and_keeps_the_exact_value_in_the_title(researcher, client_for):
    run = make_run(owner=researcher, status=Run.Status.FINISHED, best_attempt=2.5699052132701423)
    c = client_for(researcher)
    detail = c.get(f"/runs/{run.code}/").content.decode()
    assert '<dd id="run-best"><span title="2.5699052132701423">2.5699</span></dd>' in detail
    assert '<dd id="run-submission">–</dd>' in detail  # no submission: a dash, not a made-up 0
    assert '<td class="num"><span title="2.5699052132701423">2.5699</span></td>' in c.get("/runs/").content.decode()
