"""Fixtures of the run tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.redis_plugin import session_redis_owned, session_redis_start


@pytest.fixture
def redis_control() -> Iterator[None]:
    if not session_redis_owned():
        pytest.skip("REDIS_URL was given: this session does not own a Redis it may kill")
    yield
    session_redis_start()  # whatever the test did, the next one finds Redis up
