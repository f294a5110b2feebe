"""The admin overview: counts of what runs now, today's outcomes, waiting jobs and the latest
results, on the page and live from /overview.json; admins only."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from benchmark.models import AgentConfig, ResearchRun, Run, Task
from tests.sandbox.conftest import podman_ready, podman_user  # noqa: F401 - fixtures

JSON = reverse("overview_json")


@pytest.fixture
def task(db) -> Task:
    return Task.objects.create(slug="toy", version_hash="0" * 64, kind=Task.Kind.MLGYM, title="Toy", metric="acc")


def run(task: Task, status: str, *, finished: bool = False, **extra) -> Run:
    agent, _ = AgentConfig.objects.get_or_create(name="agent", defaults={"model": "openai:x"})
    return Run.objects.create(
        task=task, agent=agent, status=status, finished_at=timezone.now() if finished else None, **extra
    )


def test_it_counts_what_is_going_on_now(client_for, admin_user, task, redis_client):
    run(task, Run.Status.RUNNING)
    run(task, Run.Status.QUEUED)
    run(task, Run.Status.QUEUED)
    run(task, Run.Status.FINISHED, finished=True, method="rita", best_attempt=0.91234, exit_status="submitted")
    run(task, Run.Status.FAILED, finished=True, exit_status="exit_api")
    run(task, Run.Status.FINISHED, finished=True, source=Run.Source.MLGYM)  # an import is not a result of today
    ResearchRun.objects.create(task=task, backbone="anthropic:x", status=ResearchRun.Status.RUNNING)
    data = client_for(admin_user).get(JSON).json()
    assert (data["runs_running"], data["runs_queued"], data["research_running"]) == (1, 2, 1)
    assert data["finished_today"]["failed"] == 1 and data["queued_jobs"]["runs"] == 0
    # The imported result is counted apart, not as a run that finished here today.
    assert data["finished_today"]["finished"] == 1 and data["imported_today"] == 1
    assert {r["exit_status"] for r in data["recent"]} == {"submitted", "stopped: the model's API failed"}
    assert [(r["method"], r["best_attempt"]) for r in data["recent"]][0] == ("agent", None)
    assert {r["method"] for r in data["recent"]} == {"rita", "agent"} and len(data["recent"]) == 2
    page = client_for(admin_user).get(reverse("home")).content.decode()
    assert '<strong data-count="runs_queued">2</strong>' in page and "0.9123" in page and "js/overview.js" in page
    assert '<span data-count="imported_today">1</span> released result(s) imported today' in page
    assert "exit_api" not in page


def test_it_shows_the_numbers_to_admins_only(client_for, researcher, reviewer, admin_user, db):
    assert client_for(researcher).get(JSON).status_code == 403
    assert client_for(reviewer).get(JSON).status_code == 403
    anonymous = client_for(None).get(JSON)
    assert anonymous.status_code == 302 and "/login" in anonymous["Location"]
    assert client_for(admin_user).post(JSON).status_code == 405
    home = client_for(researcher).get(reverse("home"))  # researchers land on their own work, not the overview
    assert home.status_code == 200 and b"overview-numbers" not in home.content


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_it_refreshes_the_numbers_while_the_page_is_open(live_url, admin_user, task, monkeypatch):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the test's ORM calls beside Playwright's loop
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page()
            page.clock.install()
            page.goto(f"{live_url}/accounts/login/?next=/")
            page.fill("input[name=username]", admin_user.username)
            page.fill("input[name=password]", f"pw-{admin_user.username}")
            page.click("button[type=submit]")
            page.wait_for_selector("#overview-numbers")
            assert page.inner_text("[data-count=runs_running]") == "0"
            run(task, Run.Status.RUNNING)
            run(task, Run.Status.FINISHED, finished=True, method="late-result", best_attempt=0.5)
            page.clock.run_for(11_000)
            page.wait_for_function("document.querySelector('[data-count=runs_running]').textContent === '1'")
            assert "late-result" in page.inner_text("#overview-recent")
            assert page.inner_text("[data-count='finished_today.finished']") == "1"
        finally:
            browser.close()


@pytest.mark.docker
def test_it_shows_campaign_progress_cached_verdicts_and_sandbox_health(client_for, admin_user, reviewer):
    from review.models import Campaign
    from tests.agreement.report.test_campaign import make_campaign

    campaign = make_campaign("overview-study")  # 6 items x 2 reviewers, 12 reviews submitted, a draft
    Campaign.objects.create(name="closed one", rubric=campaign.rubric, status=Campaign.Status.CLOSED)
    admin = client_for(admin_user)
    data = admin.get(JSON).json()
    assert [(c["name"], c["reviews_submitted"], c["reviews_expected"]) for c in data["campaigns"]] == [
        ("overview-study", 12, 12)
    ]
    # Verdicts are shown once the agreement page computed them for the campaign's current state.
    assert [(v["name"], v["computed"], v["verdicts"]) for v in data["verdicts"]] == [("overview-study", False, {})]
    assert admin.get(f"/agreement/{campaign.code}/").status_code == 200
    verdicts = admin.get(JSON).json()["verdicts"][0]
    assert verdicts["computed"] and sum(verdicts["verdicts"].values()) == 5 * 3  # criteria x judge views
    page = admin.get(reverse("home")).content.decode()
    assert "<strong>12</strong> of 12 reviews done" in page and f'href="/agreement/{campaign.code}/"' in page
    sandbox = data["sandbox"]
    assert sandbox["backend"] == "docker" and sandbox["engine"] is True  # the suite runs on the real engine
    assert isinstance(sandbox["running"], int) and sandbox["image"] in (True, False)
    assert client_for(reviewer).get(JSON).status_code == 403  # judge figures never reach a reviewer


@pytest.mark.podman
@pytest.mark.docker  # podman's image comes from this node's Docker engine, once
def test_it_reports_podmans_engine_image_and_running_sandboxes_like_dockers(
    client_for,
    admin_user,
    settings,
    podman_ready,  # noqa: F811
):
    from sandbox import SandboxSpec, open_session

    settings.SANDBOX_BACKEND = "podman"
    admin = client_for(admin_user)
    before = admin.get(JSON).json()["sandbox"]
    assert before["backend"] == "podman" and before["engine"] is True
    assert before["image"] is True and before["image_tag"] == podman_ready and isinstance(before["running"], int)
    with open_session(SandboxSpec(), backend="podman"):
        during = admin.get(JSON).json()["sandbox"]
    # At least the sandbox just opened (other processes of this machine open podman sandboxes too,
    # so the count is not compared with the one before).
    assert isinstance(during["running"], int) and during["running"] >= 1
    page = admin.get(reverse("home")).content.decode()
    assert "Podman: runs" in page and f"<code>{podman_ready}</code>: present" in page
