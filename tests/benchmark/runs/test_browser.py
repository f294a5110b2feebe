"""In a real browser: launch a baseline run and watch its steps arrive live, without reloading.

The stack `make up` serves (`live_url`: gunicorn for HTTP, daphne for websockets, processes of
their own on the session's test database); an RQ SimpleWorker drains the `runs` queue from another thread and
runs the job in the real Docker sandbox.
"""

from __future__ import annotations

import threading

import pytest
from django.conf import settings
from django.test import Client

from benchmark.models import Run
from tests.benchmark.runs_support import builtin_task

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def run_worker(redis_client):
    """An RQ worker on the `runs` queue, in a thread (no fork, no signal handlers: the test owns those)."""
    import django_rq
    from rq import SimpleWorker
    from rq.timeouts import TimerDeathPenalty

    class ThreadWorker(SimpleWorker):
        death_penalty_class = TimerDeathPenalty  # the default uses SIGALRM: main thread only

        def _install_signal_handlers(self) -> None:
            pass

    queue = django_rq.get_queue("runs")
    stop = threading.Event()

    def drain() -> None:
        worker = ThreadWorker([queue], connection=queue.connection)
        while not stop.is_set():
            worker.work(burst=True, with_scheduler=False, logging_level="WARNING")
            stop.wait(0.1)

    thread = threading.Thread(target=drain, name="rq-runs", daemon=True)
    thread.start()
    yield
    stop.set()
    thread.join(timeout=60)


@pytest.fixture
def browser_page(monkeypatch):
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop on this thread; the test's own ORM calls are sync.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()


def signed_in(browser, live_url: str, user):
    client = Client()
    client.force_login(user)
    context = browser.new_context()
    cookie = {"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value}
    context.add_cookies([{**cookie, "url": live_url}])
    return context


@pytest.mark.docker
def test_it_launches_a_baseline_run_and_streams_its_steps_live(live_url, run_worker, browser_page, researcher):
    builtin_task("prisoners_dilemma")
    context = signed_in(browser_page, live_url, researcher)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_url}/runs/launch/")
    page.get_by_label("Iterated Prisoner's Dilemma (prisoners_dilemma)").check()
    page.get_by_role("button", name="Launch").click()
    page.wait_for_url(f"{live_url}/runs/*/")
    run = Run.objects.get(owner=researcher)
    assert page.url.endswith(f"/runs/{run.code}/")
    page.evaluate("window.__sameDocument = true")  # survives only if the page is never reloaded

    page.wait_for_selector("#step-3", timeout=60_000)
    page.wait_for_function("document.getElementById('run-exit').textContent === 'submitted'", timeout=30_000)
    assert page.evaluate("window.__sameDocument") is True
    assert page.locator("#steps > li").count() == 3
    assert page.locator("#step-2 .badge").first.inner_text().startswith("validate:")
    assert page.locator("#run-status").inner_text() == "finished"
    assert page.locator("#live-state").inner_text() == "finished"

    # A shareable URL per step, search and step navigation.
    page.goto(f"{live_url}/runs/")
    page.goto(f"{live_url}/runs/{run.code}/#step-2")
    page.wait_for_selector("#step-2.current")
    page.keyboard.press("j")
    page.wait_for_selector("#step-3.current")
    assert page.url.endswith("#step-3")
    page.fill("#step-search", "validate")
    assert page.locator("#search-count").inner_text() == "1 matching step(s)"
    assert page.locator("#steps > li:visible").count() == 1
    assert errors == []
    context.close()


def test_it_stops_the_live_stream_when_the_share_is_revoked(
    live_url, browser_page, researcher, other_researcher, redis_client
):
    from benchmark.runs import progress
    from benchmark.runs.services import run_share, run_share_revoke
    from tests.benchmark.runs_support import make_run

    run = make_run(owner=researcher, status=Run.Status.RUNNING)
    run_share(run=run, user=other_researcher)
    context = signed_in(browser_page, live_url, other_researcher)
    page = context.new_page()
    page.goto(f"{live_url}/runs/{run.code}/")
    page.wait_for_function("document.getElementById('live-state').textContent === 'live'", timeout=10_000)
    before = page.locator("#steps > li").count()
    progress.step_append(run=run, thought="t", action="echo live\n", observation="live")
    page.wait_for_function(f"document.querySelectorAll('#steps > li').length === {before + 1}", timeout=10_000)
    run_share_revoke(run=run, user=other_researcher, by=researcher)
    page.wait_for_function("document.getElementById('live-state').textContent === 'access withdrawn'", timeout=5_000)
    progress.step_append(run=run, thought="t", action="echo secret\n", observation="after the revocation")
    page.wait_for_timeout(500)
    assert page.locator("#steps > li").count() == before + 1
    assert "after the revocation" not in page.content()
    assert page.goto(f"{live_url}/runs/{run.code}/").status == 403
    context.close()


# -- the researcher's workbench: the runs list, compare, notes, the live header ------------------


def test_it_pages_filters_and_searches_the_runs_list_then_compares_two(live_url, browser_page, researcher):
    from benchmark.runs import progress
    from benchmark.runs.listing import PAGE_SIZE
    from tests.benchmark.runs_support import agent, make_run, stub_task

    task = stub_task("listed")
    base = agent()
    Run.objects.bulk_create([Run(task=task, agent=base, owner=researcher, method="m") for _ in range(PAGE_SIZE)])
    first = make_run(owner=researcher, task=task, status=Run.Status.FAILED)
    progress.step_append(
        run=first, thought="DISCUSSION\nlook", action="ls\n", observation="zebra stripes", publish=False
    )
    second = make_run(owner=researcher, task=task, status=Run.Status.FAILED)
    progress.step_append(run=second, thought="look", action="ls -la\n", observation="no match", publish=False)
    context = signed_in(browser_page, live_url, researcher)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(f"{live_url}/runs/")
    assert page.locator("#page-label").inner_text() == "Page 1 of 2"
    page.get_by_role("link", name="Next ›").click()
    page.wait_for_url("**/runs/?page=2")
    assert page.locator("#runs tbody tr").count() == 2

    page.goto(f"{live_url}/runs/")
    page.select_option("#id_status", "failed")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**status=failed**")
    assert page.locator("#runs tbody tr").count() == 2
    assert page.locator("#id_status").input_value() == "failed"  # the filter stays in the URL and the form

    page.fill("#id_q", "zebra")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_url("**q=zebra**")
    assert "status=failed" in page.url
    assert page.locator("#runs tbody tr").count() == 1
    page.locator("#runs tbody a").first.click()
    page.wait_for_url(f"**/runs/{first.code}/?q=zebra#step-1")
    page.wait_for_selector("#step-1.current")
    assert page.locator("#step-search").input_value() == "zebra"
    assert page.locator("#search-count").inner_text() == "1 matching step(s)"
    assert page.locator("#step-1 .thought").inner_text() == "look"  # the DISCUSSION keyword is gone

    page.goto(f"{live_url}/runs/?status=failed")
    for run in (first, second):
        page.locator(f'input[name="run"][value="{run.code}"]').check()
    page.get_by_role("button", name="Compare two runs").click()
    page.wait_for_url("**/runs/compare/?run=*")
    assert "1 with different actions" in page.locator("#compare-summary").inner_text()
    page.get_by_role("link", name="First divergence").click()
    assert page.url.endswith("#row-0")
    assert errors == []
    context.close()


def test_it_unfolds_equal_steps_of_a_comparison_and_charts_a_runs_cost(live_url, browser_page, researcher):
    from benchmark.runs import progress
    from tests.benchmark.runs_support import make_run, stub_task

    task = stub_task("unfolded")
    a, b = (make_run(owner=researcher, task=task, status=Run.Status.FINISHED) for _ in range(2))
    for run, odd in ((a, "cat a"), (b, "cat b")):
        for action in ["ls", "ls <b>x</b>", "ls", odd]:
            progress.step_append(run=run, thought="t", action=action, observation="o", cost=0.01, publish=False)
    context = signed_in(browser_page, live_url, researcher)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_url}/runs/compare/?run={a.code}&run={b.code}")
    assert page.locator("#compare-steps tbody tr").count() == 2  # the fold and the differing row
    page.get_by_role("button", name="Show 3 steps with the same action").click()
    unfolded = page.locator("#compare-steps tr.unfolded")
    assert unfolded.count() == 3 and page.locator("#compare-steps tr.fold").count() == 0
    assert unfolded.nth(1).locator("pre.action").first.inner_text() == "ls <b>x</b>"  # text, not HTML
    assert unfolded.nth(2).locator("a").first.get_attribute("href") == f"/runs/{a.code}/#step-3"
    page.goto(f"{live_url}/runs/{a.code}/")
    assert page.locator("#cost-chart svg polyline").count() == 1
    assert page.locator("#tokens-chart svg").count() == 1
    assert errors == []
    context.close()


def test_it_adds_a_note_to_a_step_and_shows_it_to_a_viewer(live_url, browser_page, researcher, other_researcher):
    from benchmark.runs import progress
    from benchmark.runs.services import run_share
    from tests.benchmark.runs_support import make_run

    run = make_run(owner=researcher, status=Run.Status.FINISHED)
    progress.step_append(run=run, thought="t", action="ls\n", observation="a", publish=False)
    progress.step_append(run=run, thought="t", action="cat a\n", observation="b", publish=False)
    run_share(run=run, user=other_researcher)
    context = signed_in(browser_page, live_url, researcher)
    page = context.new_page()
    page.goto(f"{live_url}/runs/{run.code}/")
    page.locator("#step-2 .note-form summary").click()
    page.locator("#step-2 .note-form textarea").fill("the cat was wrong")
    page.locator("#step-2 .note-form input[name=tags]").fill("bug")
    page.locator("#step-2 .note-form button").click()
    page.wait_for_url(f"**/runs/{run.code}/#step-2")
    assert page.locator("#step-2 .note-body").inner_text() == "the cat was wrong"
    assert page.locator("#step-2 .note-tag").inner_text() == "bug"
    assert page.locator("#step-1 .note").count() == 0
    viewer = signed_in(browser_page, live_url, other_researcher).new_page()
    viewer.goto(f"{live_url}/runs/{run.code}/")
    assert viewer.locator("#step-2 .note-body").inner_text() == "the cat was wrong"
    assert viewer.locator("#step-2 .note-delete").count() == 0  # only its author, the owner or an admin
    page.locator("#step-2 .note-delete").click()
    page.wait_for_url(f"**/runs/{run.code}/#step-2")
    assert page.locator("#step-2 .note").count() == 0
    context.close()


def test_it_refreshes_the_whole_header_when_a_live_run_ends(live_url, browser_page, researcher, redis_client):
    from django.utils import timezone

    from benchmark.runs import progress
    from benchmark.runs.services import run_cancel
    from benchmark.tasks.evaluation import ScoreResult
    from tests.benchmark.runs_support import make_run

    run = make_run(owner=researcher, status=Run.Status.RUNNING, started_at=timezone.now())
    context = signed_in(browser_page, live_url, researcher)
    page = context.new_page()
    page.goto(f"{live_url}/runs/{run.code}/")
    page.wait_for_function("document.getElementById('live-state').textContent === 'live'", timeout=10_000)
    assert page.locator("#cancel-form").count() == 1
    error = "Traceback: evaluate.py failed: no submission.csv"
    progress.step_append(
        run=run,
        thought="DISCUSSION\nvalidate now",
        action="validate\n",
        observation=f"Validation failed.\n{error}\n",
        score_kind="validate",
        score=ScoreResult(split="dev", error=error),
    )
    progress.step_append(
        run=run,
        thought="again",
        action="validate\n",
        observation="Your score: 2.5699052132701423",
        score_kind="validate",
        score=ScoreResult(split="dev", metrics={"Score": 2.5699052132701423}, primary=2.5699052132701423),
    )
    page.wait_for_selector("#step-2")
    assert page.locator("#step-1").inner_text().count(error) == 1  # the failed validate, once
    assert page.locator("#step-1 .thought").inner_text() == "validate now"
    assert page.locator("#step-2 .badge").first.inner_text() == "validate: 2.5699"
    page.wait_for_selector("#score-chart circle.score-point")  # the curve grows live
    assert page.locator("#replay-form").count() == 0  # not while it runs
    assert run_cancel(run=run)
    page.wait_for_function("document.getElementById('run-status').textContent === 'cancelling'", timeout=10_000)
    assert page.locator("#cancel-form").count() == 0  # asked already
    # What the run's worker does once it has stopped (benchmark.runs.services._run_finish).
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.CANCELLED, exit_status="exit_cancelled", finished_at=timezone.now()
    )
    run.refresh_from_db()
    progress.run_status_send(run)
    page.wait_for_function("document.getElementById('live-state').textContent === 'cancelled'", timeout=10_000)
    assert page.locator("#run-status").inner_text() == "cancelled"
    assert page.locator("#cancel-form").count() == 0
    assert page.locator("#run-actions #replay-form").count() == 1  # the end's actions appear without a reload
    assert page.locator("#resume-form").count() == 0  # cancelled, not interrupted: nothing to resume
    assert page.locator("#run-best").inner_text() == "2.5699"
    assert page.locator("#run-best").get_attribute("title") == "2.5699052132701423"
    wall = page.locator("#run-wall").inner_text()
    run.refresh_from_db()
    assert wall == f"{run.wall_time:.1f} s"
    page.wait_for_timeout(1500)
    assert page.locator("#run-wall").inner_text() == wall  # final: it no longer counts on
    context.close()
