"""No orphan queued runs, heartbeat verdicts of the run reaper, and the Resume action's permissions.

Redis is the session's real server: killed for "Redis down at launch", and its queue and keys
read back to see what the reaper did.
"""

from __future__ import annotations

import time
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db.models.signals import post_save
from django.utils import timezone

from benchmark.models import Run
from benchmark.runs import heartbeat, queue_state
from benchmark.runs.services import run_launch
from tests.benchmark.runs_support import agent, builtin_task, make_run
from tests.redis_plugin import session_redis_kill

pytestmark = pytest.mark.django_db(transaction=True)

FORM = {
    "agent_kind": "baseline",
    "temperature": 0,
    "top_p": 0.95,
    "history_window": 5,
    "n_runs": 2,
    "max_steps": 5,
    "cost_limit": 1,
    "command_timeout": 60,
}


def runs_queue():
    import django_rq

    return django_rq.get_queue("runs")


def test_it_launches_nothing_while_redis_is_down_and_says_so(researcher, client_for, redis_control):
    task = builtin_task("prisoners_dilemma")
    session_redis_kill()
    response = client_for(researcher).post("/runs/launch/", {**FORM, "tasks": [task.pk]})
    assert response.status_code == 503
    assert "The job queue (Redis) does not answer, so nothing was launched" in response.content.decode()
    assert not Run.objects.exists()


def test_it_marks_runs_whose_enqueue_failed_after_the_commit_as_not_queued(researcher, redis_control):
    task = builtin_task("prisoners_dilemma")

    def redis_dies(sender, instance, created, **kwargs):  # between the check and the commit
        if created:
            session_redis_kill()

    post_save.connect(redis_dies, sender=Run)
    try:
        with pytest.raises(Exception, match="2 of 2 run\\(s\\) could not be queued"):
            run_launch(owner=researcher, tasks=[task], agent=agent(), n_runs=2)
    finally:
        post_save.disconnect(redis_dies, sender=Run)
    rows = list(Run.objects.values_list("status", "exit_status", "error"))
    assert len(rows) == 2
    for status, exit_status, error in rows:
        assert (status, exit_status) == (Run.Status.FAILED, queue_state.NOT_QUEUED)
        assert error.startswith("Not started: the job queue (Redis) did not take its job")


def test_it_requeues_a_queued_run_whose_job_is_gone_once_then_fails_it(researcher, redis_client, client_for):
    (run,) = run_launch(owner=researcher, tasks=[builtin_task("prisoners_dilemma")], agent=agent())
    queue = runs_queue()
    first_job = run.params["job_id"]
    assert queue.fetch_job(first_job) is not None
    # Young, or with its job on the queue: left alone.
    call_command("reap_runs", stdout=StringIO())
    old = (timezone.now() - 2 * queue_state.ORPHAN_GRACE).isoformat()
    Run.objects.filter(pk=run.pk).update(params={**run.params, "queued_at": old})
    call_command("reap_runs", stdout=StringIO())
    run.refresh_from_db()
    assert run.status == Run.Status.QUEUED and run.params["job_id"] == first_job

    queue.fetch_job(first_job).delete()  # Redis lost it (e.g. restarted without its data)
    out = StringIO()
    call_command("reap_runs", stdout=out)
    run.refresh_from_db()
    assert f"queued run {run.code} had no job: re-queued" in out.getvalue()
    assert run.status == Run.Status.QUEUED and run.params["requeued"]["lost_job"] == first_job
    assert queue.fetch_job(run.params["job_id"]).get_status() == "queued"
    page = client_for(researcher).get(f"/runs/{run.code}/").content.decode()
    assert "Re-queued by the run reaper" in page

    queue.fetch_job(run.params["job_id"]).delete()
    Run.objects.filter(pk=run.pk).update(params={**run.params, "queued_at": old})
    call_command("reap_runs", stdout=StringIO())
    run.refresh_from_db()
    assert (run.status, run.exit_status) == (Run.Status.FAILED, queue_state.NOT_QUEUED)
    assert "lost from the queue again" in run.error
    queue.empty()


def running(owner, *, beat_age: float, worker_name: str) -> Run:
    return make_run(
        owner=owner,
        status=Run.Status.RUNNING,
        worker_name=worker_name,
        heartbeat_at=timezone.now() - timedelta(seconds=beat_age),
        started_at=timezone.now() - timedelta(seconds=beat_age),
    )


def test_it_interrupts_a_run_whose_heartbeat_lapsed_and_keeps_one_that_beats(researcher, redis_client, settings):
    import os
    import socket

    settings.RUN_HEARTBEAT_TTL = 0.5
    while not heartbeat.missing_keys_prove_death():  # a test before may have restarted Redis
        time.sleep(0.1)
    this_process = f"{socket.gethostname()}:{os.getpid()}"  # alive, as the old check would say
    lapsed = running(researcher, beat_age=10, worker_name=this_process)
    beating = running(researcher, beat_age=10, worker_name="0123456789abcdef")  # unknown to RQ
    young = running(researcher, beat_age=0, worker_name=this_process)
    redis_client.set(heartbeat.heartbeat_key(beating.code), "host:1", px=60_000)
    out = StringIO()
    call_command("reap_runs", stdout=out)
    statuses = dict(Run.objects.values_list("pk", "status"))
    assert statuses == {lapsed.pk: "interrupted", beating.pk: "running", young.pk: "running"}
    lapsed.refresh_from_db()
    assert "Every committed step is kept; Resume continues it." in lapsed.error


def test_it_waits_a_whole_ttl_after_a_redis_restart_before_trusting_missing_keys(researcher, redis_client, settings):
    settings.RUN_HEARTBEAT_TTL = 10**9  # longer than the server has been up: its keys may be gone
    run = running(researcher, beat_age=10**6, worker_name="0123456789abcdef")
    call_command("reap_runs", stdout=StringIO())
    run.refresh_from_db()
    assert run.status == Run.Status.RUNNING


def test_it_beats_while_a_run_is_driven_and_stops_after(redis_client, settings):
    settings.RUN_HEARTBEAT_EVERY = 0.05
    settings.RUN_HEARTBEAT_TTL = 0.3
    code = "5f7ad0a0-0000-4000-8000-000000000001"
    key = heartbeat.heartbeat_key(code)
    with heartbeat.beating(code):
        time.sleep(0.6)  # two TTLs: only fresh beats keep the key
        assert heartbeat.beating_codes([code]) == {code}
    assert 0 < redis_client.pttl(key) <= 300  # left to expire, never refreshed again
    redis_client.delete(key)


@pytest.fixture
def interrupted(researcher):
    return make_run(owner=researcher, status=Run.Status.INTERRUPTED, exit_status="interrupted", error="worker gone")


def test_it_lets_only_the_owner_or_an_admin_resume_an_interrupted_run(
    interrupted, researcher, other_researcher, admin_user, reviewer, client_for, redis_client
):
    url = f"/runs/{interrupted.code}/resume/"
    assert client_for(None).post(url).status_code == 302  # to the login page
    assert client_for(reviewer).post(url).status_code == 403
    assert client_for(other_researcher).post(url).status_code == 404  # not theirs: not even known
    assert client_for(researcher).get(url).status_code == 405
    assert client_for(researcher).post("/runs/00000000-0000-4000-8000-000000000000/resume/").status_code == 404
    interrupted.refresh_from_db()
    assert interrupted.status == Run.Status.INTERRUPTED
    assert client_for(admin_user).post(url).status_code == 302
    interrupted.refresh_from_db()
    assert interrupted.status == Run.Status.QUEUED and interrupted.params["resumes"][0]["by"] == admin_user.username
    assert runs_queue().fetch_job(interrupted.params["job_id"]) is not None
    # Only an interrupted run: a queued (or finished) one is refused with a message, unchanged.
    page = client_for(researcher).post(url, follow=True).content.decode()
    assert "cannot be resumed; only an interrupted one" in page
    assert len(Run.objects.get(pk=interrupted.pk).params["resumes"]) == 1
    runs_queue().empty()


def test_it_leaves_a_run_interrupted_when_its_resume_cannot_be_queued(
    interrupted, researcher, client_for, redis_control
):
    session_redis_kill()
    page = client_for(researcher).post(f"/runs/{interrupted.code}/resume/", follow=True).content.decode()
    assert "does not answer, so nothing was resumed" in page
    interrupted.refresh_from_db()
    assert (interrupted.status, interrupted.error) == (Run.Status.INTERRUPTED, "worker gone")
