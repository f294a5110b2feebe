"""Fault injection for run tests: the session's real redis-server, killed and started again."""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.llm_fakes import FakeLLM, is_check
from tests.redis_plugin import session_redis_kill


class RedisKiller:
    """The fake LLM, which kills Redis when the agent makes its `at`-th call (after answering it)."""

    def __init__(self, fake: FakeLLM, *, at: int, then: Callable[[], None] | None = None) -> None:
        self.fake, self.at, self.then = fake, at, then

    def __call__(self, request):  # type: ignore[no-untyped-def]
        response = self.fake(request)
        if not is_check(json.loads(request.content or b"{}")) and len(self.fake.calls) == self.at:
            session_redis_kill()
            if self.then is not None:
                self.then()
        return response
