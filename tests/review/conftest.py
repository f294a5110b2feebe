import pytest
from django.db import connections


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path, request):
    """Stored figures go to a per-test folder, or to the served stack's (`live_url`) when the test uses it."""
    if "live_url" in request.fixturenames:
        from pathlib import Path

        settings.MEDIA_ROOT = Path(request.getfixturevalue("live_url").media_root)
    else:
        settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture
def browser(monkeypatch):
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in this thread; the test's own ORM checks are
    # still plain synchronous code (the server runs in its own thread).
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()
            # ORM calls made while Playwright ran opened a connection in its greenlet's context:
            # close it here, or PostgreSQL refuses to drop the test database at the end.
            connections.close_all()


@pytest.fixture(autouse=True)
def agreement_cache_per_test(settings):
    """Each test its own key space in the agreement cache (Redis, shared by the session): keys hold
    row ids and counts, which the next test's rows can repeat, and per-user counters of the limit."""
    import uuid

    settings.CACHES = {
        **settings.CACHES,
        "agreement": {**settings.CACHES["agreement"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"},
    }
