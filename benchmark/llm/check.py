"""One cheap call to an endpoint, with the provider's own words: the endpoint page's "Test"
button, the launch forms, and the worker before it opens a run's sandbox all use it.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from benchmark.llm.base import Endpoint, LLMError
from benchmark.llm.client import complete

CHECK_PROMPT = "This is a connection check. Reply with the single word: ok"
CHECK_MAX_TOKENS = 16
CHECK_TIMEOUT = 20.0
WORDS_LIMIT = 2000


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    url: str
    model: str
    status: int | None  # the HTTP status the provider answered, None when it was never reached
    words: str  # the model's reply, or the provider's error body / the connection error
    seconds: float
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0

    @property
    def message(self) -> str:
        """One line to show a person: what was asked where, and what came back."""
        if self.ok:
            return f"{self.model} at {self.url} answered: {self.words or '(an empty reply)'}"
        status = f"HTTP {self.status}" if self.status else "no answer"
        return f"{self.model} at {self.url} did not answer the check ({status}): {self.words}"

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "message": self.message}


def endpoint_check(endpoint: Endpoint, model: str, *, timeout: float = CHECK_TIMEOUT) -> CheckResult:
    """Ask `model` at `endpoint` for one word, without retries; never raises for a provider failure."""
    started = time.perf_counter()
    try:
        completion = complete(
            endpoint=endpoint,
            model=model,
            messages=[{"role": "user", "content": CHECK_PROMPT}],
            temperature=None,  # reasoning and search models refuse a temperature
            max_tokens=CHECK_MAX_TOKENS,
            timeout=timeout,
            max_retries=0,
        )
    except LLMError as exc:
        # An HTTP answer: its body is the provider's words. No answer: why not (refused, DNS, the guard, no key).
        words = (exc.raw or str(exc)).strip()
        return CheckResult(
            ok=False,
            url=endpoint.url,
            model=model,
            status=exc.status,
            words=words[:WORDS_LIMIT],
            seconds=round(time.perf_counter() - started, 3),
        )
    return CheckResult(
        ok=True,
        url=endpoint.url,
        model=model,
        status=200,
        words=completion.text.strip()[:WORDS_LIMIT],
        seconds=round(time.perf_counter() - started, 3),
        tokens_in=completion.tokens_in,
        tokens_out=completion.tokens_out,
        cost=completion.cost,
    )


def launch_problem(*, endpoint: Any, model: str, user: Any) -> str | None:
    """None when `model` at `endpoint` (a ModelEndpoint) answers one call now; else what to tell the
    person launching, with the URL and the provider's words. Nothing is launched on a problem."""
    from benchmark.llm.base import ConfigurationError
    from benchmark.llm.endpoints import connection_for

    try:
        connection, name = connection_for(endpoint=endpoint, model=model, user=user)
    except ConfigurationError as exc:
        return str(exc)
    result = endpoint_check(connection, name)
    return None if result.ok else result.message
