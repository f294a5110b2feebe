"""Finding a task and acting on it: search, source filter, pages, distinct titles; the detail page's
launch link, best scores and runs, shown only as far as the viewer may see them."""

from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from benchmark.models import AgentConfig, Run, Task
from tests.benchmark.tasks.test_pages import make_task

pytestmark = pytest.mark.django_db

LIST = reverse("benchmark:task_list")


def detail(task: Task) -> str:
    return reverse("benchmark:task_detail", args=[task.code])


def run_on(task: Task, *, method: str, owner=None, attempt=None, **extra) -> Run:
    agent, _ = AgentConfig.objects.get_or_create(name=f"agent {method}", defaults={"model": "openai:x"})
    return Run.objects.create(
        task=task, agent=agent, owner=owner, method=method, status=extra.pop("status", Run.Status.FINISHED),
        best_attempt=attempt, **extra,
    )  # fmt: skip


def test_it_searches_filters_by_source_and_pages_the_task_list(client_for, researcher):
    make_task(slug="colonel_blotto", title="Colonel Blotto")
    make_task(slug="blotto", title="Colonel Blotto", source="mlgym")
    for index in range(55):
        make_task(slug=f"iclr2025_t{index:02d}", title=f"Workshop {index:02d}", kind=Task.Kind.MLR, source="mlrbench")
    client = client_for(researcher)
    page = client.get(LIST).content.decode()
    rows = page.split('id="task-table"')[1].split("</tbody>")[0].count("<tr>") - 1  # minus the header row
    assert rows == 50 and "page 1 of 2" in page  # a page, not 57 rows at once
    found = client.get(LIST, {"q": "blotto"}).content.decode()
    assert ">Colonel Blotto (colonel_blotto)</a>" in found and ">Colonel Blotto (blotto)</a>" in found
    assert "Workshop" not in found
    mlgym = client.get(LIST, {"source": "mlgym"}).content.decode()
    assert "(blotto)" in mlgym and "(colonel_blotto)" not in mlgym
    second = client.get(LIST, {"source": "mlrbench", "page": 2}).content.decode()
    assert "Workshop 54" in second and "source=mlrbench&amp;page=1" in second
    assert "No task matches." in client.get(LIST, {"q": "nothing-like-this"}).content.decode()


def test_it_guards_the_task_pages(client_for, reviewer, researcher):
    task = make_task()
    for url in (LIST, detail(task)):
        assert client_for(reviewer).get(url).status_code == 403
        anonymous = client_for(None).get(url)
        assert anonymous.status_code == 302 and "/login" in anonymous["Location"]
        assert client_for(researcher).post(url).status_code == 405
    assert client_for(researcher).get(reverse("benchmark:task_detail", args=[uuid.uuid4()])).status_code == 404


def test_it_offers_a_launch_on_the_task_and_ticks_it_on_the_launch_form(client_for, researcher):
    task = make_task(slug="prisoners_dilemma", title="Prisoner's Dilemma")
    mlr = make_task(slug="iclr2025_x", title="X workshop", kind=Task.Kind.MLR, source="mlrbench")
    missing = make_task(slug="cifar", title="CIFAR", source="mlgym", data_status=Task.DataStatus.MISSING)
    client = client_for(researcher)
    launch = f"{reverse('benchmark:run_launch')}?task={task.code}"
    assert f'href="{launch}"' in client.get(detail(task)).content.decode()
    form = client.get(launch).context["form"]
    assert form.initial["tasks"] == [task.pk]
    assert client.get(f"{reverse('benchmark:run_launch')}?task=not-a-uuid").status_code == 200
    assert f"{reverse('benchmark:research_new')}?task={mlr.code}" in client.get(detail(mlr)).content.decode()
    page = client.get(detail(missing)).content.decode()
    assert "Launch on this task" not in page and "data is missing on this machine" in page


def test_it_shows_the_tasks_runs_and_best_scores_the_viewer_may_see(
    client_for, researcher, other_researcher, admin_user
):
    task = make_task(slug="sat", title="SAT", metric="Decisions", direction=Task.Direction.MIN)
    older = make_task(slug="sat", title="SAT", metric="Decisions", direction=Task.Direction.MIN, is_current=False)
    mine = run_on(task, method="rita", owner=researcher, attempt=120.0)
    mine_old = run_on(older, method="rita", owner=researcher, attempt=90.0)  # another version: still this task
    imported = run_on(task, method="gpt-o1", attempt=150.0, source=Run.Source.MLGYM)
    theirs = run_on(task, method="oscar-secret", owner=other_researcher, attempt=10.0)
    run_on(task, method="broken", owner=researcher, attempt=1.0, status=Run.Status.FAILED)
    response = client_for(researcher).get(detail(task))
    best = [(row["method"], row["run"].pk) for row in response.context["best"]]
    assert best == [("rita", mine_old.pk), ("gpt-o1", imported.pk)]  # lower is better; failed runs are not results
    page = response.content.decode()
    for run in (mine, mine_old, imported):
        assert str(run.code)[:8] in page
    assert "oscar-secret" not in page and str(theirs.code)[:8] not in page
    assert "oscar-secret" in client_for(admin_user).get(detail(task)).content.decode()
