"""The judge lab's progress page in Debian's chromium: a cold page says it is being computed and
reloads itself, with no script, until the job's result is there."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from tests.agreement.lab.client import run_statistics_jobs
from tests.agreement.lab.test_statistics import JUDGES, ideas  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_progress_page_reloads_itself_until_the_result_is_there(
    ideas,  # noqa: F811
    live_server,
    researcher,
    browser,
    redis_client,
) -> None:
    client = Client()
    client.force_login(researcher)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    context = browser.new_context(java_script_enabled=False)  # the reload is the page's, not a script's
    context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    response = page.goto(live_server.url + JUDGES)
    assert response.status == 202
    assert "being computed" in page.inner_text("#statistics-pending")
    run_statistics_jobs()
    page.wait_for_selector("#self-preference", timeout=20_000)  # no page.reload() here: the page reloads itself
    assert "Cohen's kappa, quadratic weights" in page.inner_text("main")
    assert page.query_selector("#statistics-pending") is None
    assert len([u for u in requests if u.endswith(JUDGES)]) >= 2
    assert [u for u in requests if not u.startswith(live_server.url)] == []
