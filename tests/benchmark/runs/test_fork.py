"""Fork from a step: the permission checklist, what a fork copies and records, the run pages and the
compare view from the fork point, and (in the real Docker sandbox) a fork that replays the parent's
steps and goes on with another model."""

from __future__ import annotations

import uuid

import pytest

from benchmark.models import AgentConfig, Run, Step
from benchmark.runs import progress
from benchmark.runs.services import run_execute, run_share
from tests.benchmark.runs_support import agent, builtin_task, make_run

pytestmark = pytest.mark.django_db(transaction=True)


def reply(thought: str, command: str) -> str:
    return f"DISCUSSION\n{thought}\n\n```\n{command}\n```"


def finished_run(owner, *, steps: int = 3, **fields) -> Run:
    run = make_run(
        owner=owner,
        agent_config=agent(AgentConfig.Kind.MODEL, model="anthropic:claude-test"),
        status=Run.Status.RUNNING,
        **fields,
    )
    for i in range(1, steps + 1):
        progress.step_append(
            run=run,
            thought=f"thought {i}",
            action=f"echo {i}",
            observation=str(i),
            raw_response=reply(f"thought {i}", f"echo {i}"),
            tokens_sent=100,
            cost=0.5,
            publish=False,
        )
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FINISHED, exit_status="submitted")
    run.refresh_from_db()
    return run


def fork_form(fake_llm, step: int, **overrides) -> dict:
    endpoint = fake_llm.endpoints["openai"]
    return {
        "step": step,
        "model": f"{endpoint.code}/{endpoint.model_names[0]}",
        "temperature": 0,
        "top_p": 0.95,
        "history_window": 5,
        "max_steps": 6,
        "cost_limit": 1,
        **overrides,
    }


def runs_queue():
    import django_rq

    return django_rq.get_queue("runs")


def test_it_lets_only_the_owner_or_an_admin_fork_and_writes_nothing_on_get(
    researcher, other_researcher, admin_user, reviewer, client_for, fake_llm, redis_client
):
    parent = finished_run(researcher)
    url = f"/runs/{parent.code}/fork/"
    before = Run.objects.count()
    page = client_for(researcher).get(f"{url}?step=2")
    assert page.status_code == 200 and b'name="step" value="2"' in page.content
    assert client_for(admin_user).get(url).status_code == 200
    assert Run.objects.count() == before  # a GET forks nothing
    assert client_for(other_researcher).get(url).status_code == 404
    assert client_for(other_researcher).post(url, fork_form(fake_llm, 2)).status_code == 404
    run_share(run=parent, user=other_researcher)  # a viewer may look, not fork (it copies the steps)
    assert client_for(other_researcher).post(url, fork_form(fake_llm, 2)).status_code == 403
    assert client_for(reviewer).post(url, fork_form(fake_llm, 2)).status_code == 403
    anonymous = client_for(None).post(url, fork_form(fake_llm, 2))
    assert anonymous.status_code == 302 and "/accounts/login" in anonymous["Location"]
    assert client_for(researcher).post(f"/runs/{uuid.uuid4()}/fork/", fork_form(fake_llm, 2)).status_code == 404
    assert client_for(researcher).put(url).status_code == 405
    assert Run.objects.count() == before
    response = client_for(admin_user).post(url, fork_form(fake_llm, 2))
    fork = Run.objects.get(fork_of=parent)
    assert response.status_code == 302 and response["Location"] == f"/runs/{fork.code}/"
    assert fork.owner == admin_user
    runs_queue().empty()


def test_it_copies_the_steps_up_to_the_fork_point_without_their_cost_and_queues_the_fork(
    researcher, client_for, fake_llm, redis_client
):
    parent = finished_run(researcher, params={"command_timeout": 120})
    client_for(researcher).post(f"/runs/{parent.code}/fork/", fork_form(fake_llm, 2, title="try gpt"))
    fork = Run.objects.get(fork_of=parent)
    assert (fork.fork_step, fork.status, fork.step_count) == (2, Run.Status.QUEUED, 2)
    steps = list(fork.steps.order_by("index"))
    assert [s.action for s in steps] == ["echo 1", "echo 2"]
    assert [s.state["forked_from"] for s in steps] == [
        {"run": str(parent.code), "index": 1},
        {"run": str(parent.code), "index": 2},
    ]
    # The parent paid for these steps: the fork's totals start at nothing.
    assert (fork.cost, fork.tokens_sent) == (0, 0) and all(s.cost == 0 and s.tokens_sent == 0 for s in steps)
    assert fork.agent.model == f"openai:{fake_llm.endpoints['openai'].model_names[0]}"
    assert fork.group.title == "try gpt" and fork.params["max_steps"] == 6
    assert fork.params["command_timeout"] == 120  # the parent's, under which its commands ran
    assert runs_queue().fetch_job(fork.params["job_id"]) is not None
    parent.refresh_from_db()
    assert (parent.step_count, parent.cost) == (3, 1.5)  # untouched
    runs_queue().empty()


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"step": 9}, "This run has no step 9."),
        ({"max_steps": 2}, "Leave the agent at least one step after step 2"),
        ({"model": "not-a-choice"}, "choose an endpoint and a model from the list"),
    ],
)
def test_it_refuses_a_bad_fork_form_and_creates_nothing(change, words, researcher, client_for, fake_llm, redis_client):
    parent = finished_run(researcher)
    before = (Run.objects.count(), Step.objects.count(), AgentConfig.objects.count())
    page = client_for(researcher).post(f"/runs/{parent.code}/fork/", {**fork_form(fake_llm, 2), **change})
    assert page.status_code == 200 and words in page.content.decode()
    assert (Run.objects.count(), Step.objects.count(), AgentConfig.objects.count()) == before


def test_it_refuses_a_fork_when_the_endpoint_check_fails(researcher, client_for, fake_llm, redis_client):
    parent = finished_run(researcher)
    fake_llm.check_error(401, {"error": {"message": "invalid key", "type": "invalid_request_error"}})
    page = client_for(researcher).post(f"/runs/{parent.code}/fork/", fork_form(fake_llm, 2)).content.decode()
    assert "invalid key" in page and not Run.objects.filter(fork_of=parent).exists()


def test_it_refuses_to_fork_an_active_or_imported_run(researcher, admin_user, client_for, fake_llm, redis_client):
    running = make_run(owner=researcher, status=Run.Status.RUNNING)
    page = client_for(researcher).get(f"/runs/{running.code}/fork/", follow=True).content.decode()
    assert "cannot be forked yet" in page
    imported = finished_run(None, source=Run.Source.MLGYM)
    page = client_for(admin_user).post(f"/runs/{imported.code}/fork/", fork_form(fake_llm, 1), follow=True)
    assert "Only runs made on Referee can be forked" in page.content.decode()
    assert not Run.objects.filter(fork_of__isnull=False).exists()


def test_it_gives_a_live_runs_page_the_fork_link_for_its_end_only_for_the_owner_and_admins(
    researcher, other_researcher, admin_user, client_for
):
    """run.js shows "Fork from here" when the live run ends (test_fork_browser); the URL it needs is
    on the page only for those who may fork, and never for an imported run."""
    running = make_run(owner=researcher, status=Run.Status.RUNNING)
    run_share(run=running, user=other_researcher)
    later = f'data-fork-later-url="/runs/{running.code}/fork/"'
    for user, shown in ((researcher, True), (admin_user, True), (other_researcher, False)):
        page = client_for(user).get(f"/runs/{running.code}/").content.decode()
        assert (later in page) is shown and ('id="fork-link"' in page) is shown, user
        assert "data-fork-url=" not in page  # not forkable while it runs
    imported = make_run(owner=researcher, status=Run.Status.RUNNING, source=Run.Source.MLGYM)
    assert "data-fork-later-url" not in client_for(researcher).get(f"/runs/{imported.code}/").content.decode()


def test_it_links_parent_and_fork_and_compares_them_from_the_fork_point(
    researcher, admin_user, client_for, fake_llm, redis_client
):
    parent = finished_run(researcher)
    client_for(researcher).post(f"/runs/{parent.code}/fork/", fork_form(fake_llm, 2))
    fork = Run.objects.get(fork_of=parent)
    progress.step_append(run=fork, thought="new", action="ls -la", observation="x", publish=False)
    fork_page = client_for(researcher).get(f"/runs/{fork.code}/").content.decode()
    assert "Forked from" in fork_page and f"/runs/{parent.code}/" in fork_page and "at step 2" in fork_page
    compare = f"/runs/compare/?run={parent.code}&amp;run={fork.code}&amp;from=2"
    assert compare in fork_page
    parent_page = client_for(researcher).get(f"/runs/{parent.code}/").content.decode()
    assert 'id="run-forks"' in parent_page and f"/runs/{fork.code}/" in parent_page
    assert 'data-fork-url="' in parent_page  # the owner sees "Fork from here" on each step

    page = client_for(researcher).get(compare.replace("&amp;", "&")).content.decode()
    assert "run B was forked from run A at step 2" in page
    assert "echo 1" not in page  # the steps before the fork point are left out
    assert "echo 2" in page and "echo 3" in page and "ls -la" in page
    bad = client_for(researcher).get(f"/runs/compare/?run={parent.code}&run={fork.code}&from=two")
    assert bad.status_code == 400 and "a whole number" in bad.content.decode()

    # An admin's fork of this run is the admin's: the owner's page does not list it.
    client_for(admin_user).post(f"/runs/{parent.code}/fork/", fork_form(fake_llm, 1))
    assert Run.objects.filter(fork_of=parent).count() == 2
    parent_page = client_for(researcher).get(f"/runs/{parent.code}/").content.decode()
    assert parent_page.count("compare from step") == 1
    runs_queue().empty()


@pytest.mark.docker
def test_it_replays_the_parent_steps_in_a_fresh_sandbox_and_goes_on_with_the_chosen_model(
    researcher, client_for, fake_llm, redis_client
):
    task = builtin_task("prisoners_dilemma")
    parent = make_run(
        owner=researcher,
        task=task,
        agent_config=agent(AgentConfig.Kind.MODEL, model="anthropic:claude-test", price_input_per_mtok=1.0),
    )
    fake_llm.anthropic(reply("one", "echo one > one.txt"), tokens_in=1000)
    fake_llm.anthropic(reply("two", "echo two > two.txt"), tokens_in=1000)
    fake_llm.anthropic(reply("done", "submit"), tokens_in=1000)
    run_execute(run_id=parent.pk)
    parent.refresh_from_db()
    assert (parent.status, parent.step_count) == (Run.Status.FINISHED, 3)

    client_for(researcher).post(f"/runs/{parent.code}/fork/", fork_form(fake_llm, 1, max_steps=3))
    fork = Run.objects.get(fork_of=parent)
    runs_queue().empty()  # the test drives the fork, as the worker would
    fake_llm.openai(reply("look", "ls; cat one.txt"), tokens_in=500)
    fake_llm.openai(reply("done", "submit"), tokens_in=500)
    calls_before = len(fake_llm.calls)
    run_execute(run_id=fork.pk)
    fork.refresh_from_db()
    steps = list(fork.steps.order_by("index"))
    assert [s.action.strip() for s in steps] == ["echo one > one.txt", "ls; cat one.txt", "submit"]
    assert (fork.status, fork.exit_status) == (Run.Status.FINISHED, "submitted")
    # The replay rebuilt the workspace as the parent had it after step 1, not after step 2.
    assert "one" in steps[1].observation and "two.txt" not in steps[1].observation
    assert fork.params["fork"] == {"replayed": 1, "replay_differs": []}
    # The new model saw step 1 as its own history; its calls, and only they, are the fork's cost.
    first = fake_llm.calls[calls_before]
    assert "/chat/completions" in first["url"]
    assistant = [m["content"] for m in first["body"]["messages"] if m["role"] == "assistant"]
    assert assistant == [reply("one", "echo one > one.txt")]
    assert fork.tokens_sent == 1000 and fork.api_calls == 2
    assert fork.best_submission is not None
