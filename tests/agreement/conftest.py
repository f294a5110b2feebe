import pytest

# The review tests' browser (Debian's chromium through Playwright) and per-test media folder serve
# the agreement pages too: agreement sits above review, and so do its tests.
from tests.review.conftest import browser, media_root  # noqa: F401


@pytest.fixture(autouse=True)
def agreement_cache_per_test(settings):
    """Each test its own key space in the agreement cache (Redis, shared by the session): keys hold
    row ids and counts, which the next test's rows can repeat, and per-user counters of the limit."""
    import uuid

    settings.CACHES = {
        **settings.CACHES,
        "agreement": {**settings.CACHES["agreement"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"},
    }
