"""Every page meets WCAG AA contrast, measured in chromium as each persona sees it (issue 33).

The test fills a small world (runs with steps, scores and a fork, tasks, endpoints, a research run
with its stages and judgments, rubrics, a paper campaign with reviews and judgments, a trajectory
campaign assigned to the reviewer), then, as the anonymous visitor, a reviewer, a researcher and an
admin, follows every same-site link from the home page (GET only, one or two pages per view and
query shape) on the stack `make up` serves, and computes the contrast of every visible text
(tests/contrast.py): >= 4.5:1, or 3:1 for large text. The same pages are fetched with Django's test
client too, which tells which templates they rendered: every page template must have been seen,
except those listed below with the reason no link reaches them.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.conf import settings
from django.test import Client
from django.urls import Resolver404, resolve

from tests.contrast import low_contrast

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
TEMPLATES = Path(settings.BASE_DIR) / "templates"
PER_SHAPE = 2  # pages visited per (view, query keys): enough to see each template, not every row
# Page templates no GET link reaches; each is rendered after a POST or on an error the crawl does
# not cause (they extend base.html, whose colours the crawled pages measure).
UNREACHED = {
    "413.html": "an upload over the size limit",
    "benchmark/run_cancel_confirm.html": "a Cancel POST without JavaScript",
    "accounts/invitation_accept.html": "an invitation link with its token",
    "accounts/invitation_unusable.html": "an invitation link that expired",
    "registration/password_change_done.html": "after a password change (POST)",
    "review/invitations_sent.html": "after sending invitations (POST)",
    "review/reminders_unsent.html": "after reminders that could not be sent (POST)",
    "accounts/no_role.html": "a signed-in account with no role",
    "agreement/report/standalone.html": "the downloaded report (an attachment the crawl does not open as a page)",
}
SKIP_VIEWS = {"admin", "logout", "healthz", "overview_json"}  # the Django admin (its own styles), signing out, JSON


def page_templates() -> set[str]:
    found = set()
    for path in TEMPLATES.rglob("*.html"):
        name = str(path.relative_to(TEMPLATES))
        if name == "base.html" or "partials/" in name or Path(name).name.startswith("_"):
            continue
        found.add(name)
    return found


def world(researcher, other_researcher, reviewer, admin_user, default_endpoints) -> None:
    from benchmark.models import AgentConfig, Artifact, Run
    from benchmark.runs import forks, progress
    from benchmark.runs.services import Limits, run_share
    from review.assignment.services import campaign_assign
    from review.campaigns.services import campaign_create
    from tests.agreement.report.test_campaign import make_campaign
    from tests.benchmark.runs_support import agent, builtin_task, make_run
    from tests.judge.factories import make_artifact, make_judgment, make_research_run, make_task, rubric
    from tests.review.factories import make_paper
    from tests.review.trajectory_factories import trajectory_campaign

    task = builtin_task("prisoners_dilemma")
    run = make_run(
        owner=researcher,
        task=task,
        agent_config=agent(
            AgentConfig.Kind.MODEL, model="anthropic:claude-test", endpoint=default_endpoints["anthropic"]
        ),
        status=Run.Status.RUNNING,
    )
    for i, action in enumerate(["ls", "cat strategy.py", "validate", "submit"], start=1):
        score = None
        if action in ("validate", "submit"):
            from benchmark.tasks.evaluation import ScoreResult

            score = ScoreResult(split="dev", metrics={"Score": 2.1 + i / 10}, primary=2.1 + i / 10)
        progress.step_append(
            run=run, thought=f"DISCUSSION\nthought {i}", action=action, observation=f"output {i}\n\x1b[31mred\x1b[0m",
            tokens_sent=1200, tokens_received=80, cost=0.004, publish=False,
            score_kind=action if score else None, score=score,
        )  # fmt: skip
    Run.objects.filter(pk=run.pk).update(status=Run.Status.FINISHED, exit_status="submitted")
    run.refresh_from_db()
    run_share(run=run, user=other_researcher)
    fork_agent = agent(AgentConfig.Kind.MODEL, model="openai:gpt-4o", endpoint=default_endpoints["openai"])
    fork = forks.run_fork(run=run, step_index=2, agent=fork_agent, owner=researcher, limits=Limits(max_steps=6))
    Run.objects.filter(pk=fork.pk).update(
        status=Run.Status.FAILED, exit_status="exit_api", error="the model never answered"
    )
    make_run(owner=researcher, task=task, status=Run.Status.CANCELLED, exit_status="exit_cancelled")

    mlr = make_task("iclr2025_contrast")
    research = make_research_run(owner=researcher, task=mlr, backbone="anthropic:claude-test")
    for stage in ("idea", "literature", "proposal"):
        make_artifact(research, stage=stage, content=f"# The {stage}\n\nText of the {stage}.")
    paper = make_artifact(research, stage=Artifact.Stage.PAPER, content="# A paper\n\nResults $x^2$.")
    for model in ("anthropic:judge-a", "openai:judge-b"):
        make_judgment(paper, rubric("end2end"), model, {d["key"]: 6 for d in rubric("end2end").score_dimensions})
    from tests.judge.factories import make_stepwise_item

    for model in ("claude-3-7-sonnet", "gpt-4o"):
        idea = make_stepwise_item(mlr, model, stage="idea")
        for judge in ("anthropic:judge-a", "openai:judge-b"):
            make_judgment(idea, rubric("idea"), judge, {d["key"]: 5 for d in rubric("idea").score_dimensions})
    make_campaign("contrast-study")
    # The judge lab: two imported experiments (MLR-Bench's no-code ablation) and their comparison.
    from agreement.lab.services import comparison_create
    from judge.mlr_reviews import ablation_experiment

    lab_papers = [make_paper(backbone="claude"), make_paper(backbone="gemini")]
    experiments = [
        ablation_experiment(judge_model=model, rubric=rubric("end2end"), papers=lab_papers)
        for model in ("anthropic:judge-a", "openai:judge-b")
    ]
    comparison_create(baseline=experiments[0], candidate=experiments[1], user=admin_user, bootstrap=50)
    statistics_jobs_run()  # papers, reviews and judgments: the agreement pages
    papers = [make_paper(backbone="claude"), make_paper(backbone="gpt")]
    paper_campaign = campaign_create(
        name="contrast papers", rubric=rubric("end2end"), stage="paper",
        artifacts=[a for a in papers], runs=[], reviewers=[reviewer], reviewers_per_item=1,
    )  # fmt: skip
    campaign_assign(campaign=paper_campaign)
    trajectory_campaign([reviewer], name="contrast trajectories")


def statistics_jobs_run() -> None:
    import django_rq
    from rq import SimpleWorker

    queue = django_rq.get_queue("default")
    SimpleWorker([queue], connection=queue.connection).work(burst=True)


def summary(text: dict) -> str:
    kind = f"{text['tag'].lower()}.{text['cls']}" if text["cls"] else text["tag"].lower()
    return f"{kind} {text['ratio']}:1 rgb({text['fg']}) on rgb({text['bg']}) «{text['text']}»"


def crawl(context, live_url: str, client: Client, seen_templates: set[str], failures: list[str], who: str) -> int:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    queue: deque[str] = deque(["/"])
    queued = {"/"}
    shapes: dict[tuple[str, frozenset[str]], int] = {}
    visited = 0
    while queue:
        path = queue.popleft()
        response = client.get(path, follow=True)
        if response.status_code == 202:  # a judge lab page computes off the request: run its job here
            seen_templates.update(t.name for t in response.templates if t.name)
            statistics_jobs_run()
            response = client.get(path, follow=True)
        if response.status_code >= 500:
            failures.append(f"{who} {path}: HTTP {response.status_code}")
        if response.get("Content-Type", "").split(";")[0] != "text/html" or response.has_header("Content-Disposition"):
            continue  # downloads (a report saved as HTML too)
        seen_templates.update(t.name for t in response.templates if t.name)
        page.goto(f"{live_url}{path}")
        visited += 1
        try:
            page.wait_for_load_state("networkidle", timeout=10_000)
        except PlaywrightTimeout:  # a page that polls (a statistics page computing) never idles
            page.wait_for_timeout(500)
        low, measured = low_contrast(page)
        failures.extend(f"{who} {path}: {summary(text)}" for text in low)
        hrefs = page.eval_on_selector_all("a[href]", "els => els.map((a) => a.getAttribute('href'))")
        for href in hrefs:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or not parts.path.startswith("/") or parts.path.startswith("/static/"):
                continue
            try:
                match = resolve(parts.path)
            except Resolver404:
                continue
            name = match.url_name or ""
            if match.namespace == "admin" or name in SKIP_VIEWS or parts.path.startswith("/admin/"):
                continue
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            shape = (f"{match.namespace}:{name}", frozenset(k for k, _ in parse_qsl(parts.query)))
            if target in queued or shapes.get(shape, 0) >= PER_SHAPE:
                continue
            shapes[shape] = shapes.get(shape, 0) + 1
            queued.add(target)
            queue.append(target)
    failures.extend(f"{who}: script error {e}" for e in errors)
    page.close()
    return visited


def test_every_text_of_every_page_meets_wcag_aa_contrast(
    live_url, researcher, other_researcher, reviewer, admin_user, default_endpoints, redis_client, monkeypatch
):
    from django.core.management import call_command
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API keeps a loop on this thread
    call_command("vendor_static", verbosity=0)  # plotly, served from static/
    world(researcher, other_researcher, reviewer, admin_user, default_endpoints)
    seen: set[str] = set()
    failures: list[str] = []
    visited = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            for who, user in [
                ("anonymous", None),
                ("reviewer", reviewer),
                ("researcher", researcher),
                ("admin", admin_user),
            ]:
                client = Client(raise_request_exception=False)
                context = browser.new_context(viewport={"width": 1366, "height": 900})
                if user is not None:
                    client.force_login(user)
                    session = client.cookies[settings.SESSION_COOKIE_NAME].value
                    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_url}])
                visited[who] = crawl(context, live_url, client, seen, failures, who)
                context.close()
            # Not found and forbidden pages, as a researcher meets them.
            context = browser.new_context()
            client = Client(raise_request_exception=False)
            client.force_login(reviewer)
            session = client.cookies[settings.SESSION_COOKIE_NAME].value
            context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_url}])
            page = context.new_page()
            for path in ("/runs/", "/no-such-page/"):
                seen.update(t.name for t in client.get(path).templates if t.name)
                page.goto(f"{live_url}{path}")
                failures.extend(f"reviewer {path}: {summary(t)}" for t in low_contrast(page)[0])
        finally:
            browser.close()
    missing = page_templates() - seen - set(UNREACHED)
    # One line per distinct failure (a colour pair on an element kind), with how often it was met.
    distinct: dict[str, int] = {}
    for failure in failures:
        key = (
            failure.split(" «")[0].split(": ", 1)[-1] + " «" + failure.split(" «", 1)[-1]
            if " «" in failure
            else failure
        )
        distinct[key] = distinct.get(key, 0) + 1
    assert failures == [], "\n".join(f"{n} x {key}" for key, n in distinct.items())
    assert not missing, f"no crawled page rendered: {sorted(missing)}"
    # The sign-in page for the anonymous visitor; the others' pages through their menus.
    assert visited["anonymous"] >= 1 and min(visited["reviewer"], visited["researcher"], visited["admin"]) > 3, visited
