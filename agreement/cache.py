"""The agreement cache (settings.CACHES["agreement"], in Redis: shared by the web processes and
the RQ workers): results keyed by a fingerprint of the data they read, so an entry is never stale
and old keys simply age out. A failing cache backend never fails a page: its result is then
computed and not stored. A campaign's analysis is cached through it by agreement/report/selectors.py.

The judge lab's statistics (seconds each over every stepwise judgment, issue 30) are not computed
in the request: `cached_or_queued` answers from the cache, or queues one job per key (a SET NX
marker deduplicates concurrent requests) and says so; the page shows the job's progress until the
result is there, and its failure plainly. A user may start LAB_COLD_PER_MINUTE cold computations
a minute (`Limited` beyond); cached results and polls of a queued job cost nothing.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import django_rq
from django.conf import settings as django_settings
from django.core.cache import caches
from django.utils import timezone
from django.utils.module_loading import import_string
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

log = logging.getLogger(__name__)
TIMEOUT = 6 * 3600
# What this process computed and rendered (cache misses); tests and the benchmark read it.
computed: Counter[str] = Counter()


def _cache() -> Any:
    return caches["agreement"]


def _get(key: str) -> Any:
    try:
        return _cache().get(key)
    except Exception:  # a broken cache backend costs speed, never the page
        log.exception("agreement cache get failed")
        return None


def _set(key: str, value: Any) -> None:
    try:
        _cache().set(key, value, TIMEOUT)
    except Exception:
        log.exception("agreement cache set failed")


def cache_clear() -> int:
    """Drop this cache's entries (benchmarks' cold runs). Not `cache.clear()`: on Redis that is
    FLUSHDB, which would take the job queues sharing the database with it."""
    cache = _cache()
    client = cache._cache.get_client(write=True)
    keys = list(client.scan_iter(match=cache.make_key("*"), count=1000))
    return client.delete(*keys) if keys else 0


# --- statistics computed off the request (the judge lab) -------------------------------------

QUEUE = "default"
# A marker outlives the queue's job timeout (1800 s): a job that died without a word is caught by
# its RQ status, not by the marker running out.
PENDING_TTL = 2 * 3600
LOST_AFTER = 30  # a marker's job missing from RQ this long after it was set is reported lost
FAILED_TTL = 300  # a failure is shown this long; the next request after it starts a new job


@dataclass
class Pending:
    """A computation not done yet: queued, running, or failed (with the error, shown as it is)."""

    status: str
    since: str
    job: str
    error: str = ""

    @property
    def started(self) -> datetime:
        return datetime.fromisoformat(self.since)


class Limited(Exception):
    """The user started their cold computations of this minute; `retry_after` seconds to the next."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"retry after {retry_after} s")
        self.retry_after = retry_after


def _pending_key(key: str) -> str:
    return f"pending:{key}"


def job_id(key: str) -> str:
    return "statistics-" + hashlib.sha256(key.encode()).hexdigest()[:32]


def _job_failure(job: Job | None) -> str:
    """Why the RQ job of a marker failed, or "" while it is queued or running."""
    if job is None:
        return "the job was lost (the queue no longer knows it)"
    status = job.get_status(refresh=True)
    if status in (JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED):
        result = job.latest_result()
        lines = (getattr(result, "exc_string", "") or "").strip().splitlines()
        return f"the job {status}: {lines[-1] if lines else 'no error recorded'}"
    return ""


def pending(key: str) -> Pending | None:
    """The marker of `key`'s computation, with a job RQ gave up on (timeout, dead worker) as failed."""
    raw = _cache().get(_pending_key(key))
    if raw is None:
        return None
    mark = Pending(**raw)
    if mark.status == "failed":
        return mark
    try:
        job = Job.fetch(mark.job, connection=django_rq.get_connection(QUEUE))
    except NoSuchJobError:
        job = None
    error = _job_failure(job)
    if job is None and (timezone.now() - mark.started).total_seconds() < LOST_AFTER:
        error = ""  # the request that set the marker enqueues on its commit, a moment later
    if error:
        mark = Pending(status="failed", since=mark.since, job=mark.job, error=error)
        _cache().set(_pending_key(key), asdict(mark), FAILED_TTL)
    return mark


def cold_allowed(*, user_id: int) -> None:
    """Count one cold computation for the user in this minute's window; raise Limited past the limit."""
    now = time.time()
    counter = f"cold:{user_id}:{int(now // 60)}"
    cache = _cache()
    cache.add(counter, 0, 120)
    if cache.incr(counter) > django_settings.LAB_COLD_PER_MINUTE:
        raise Limited(retry_after=60 - int(now % 60))


def cached_or_queued(*, key: str, task: str, kwargs: dict[str, Any], user_id: int) -> tuple[Any, Pending | None]:
    """(result, None) when `key` is cached; else (None, its marker), queueing the job that runs
    `task(**kwargs)` and stores it under `key` unless one is queued already. Raises Limited when
    this request would start a computation past the user's limit. Redis errors propagate: without
    Redis there is neither a cache nor a queue."""
    value = _cache().get(key)
    if value is not None:
        return value, None
    mark = pending(key)
    if mark is not None:
        return None, mark
    cold_allowed(user_id=user_id)
    mark = Pending(status="queued", since=timezone.now().isoformat(), job=job_id(key))
    if not _cache().add(_pending_key(key), asdict(mark), PENDING_TTL):  # another request was first
        return None, pending(key) or mark
    value = _cache().get(key)
    if value is not None:  # a job stored it (and dropped its marker) since the first look
        _cache().delete(_pending_key(key))
        return value, None
    # django-rq enqueues when the transaction commits (at once outside one, as in a GET).
    django_rq.get_queue(QUEUE).enqueue(
        "agreement.jobs.compute_statistics",
        kwargs={"key": key, "task": task, "params": kwargs},
        job_id=mark.job,
    )
    return None, mark


def statistics_compute(*, key: str, task: str, kwargs: dict[str, Any]) -> None:
    """Run `task(**kwargs)` and store its result under `key` (the job). A failure is recorded on the
    marker for the page to show, and raised for RQ to keep."""
    if not task.startswith("agreement.lab.statistics."):  # a job names code to run: only these
        raise ValueError(f"not a statistics task: {task}")
    marker = _pending_key(key)
    started = Pending(status="running", since=timezone.now().isoformat(), job=job_id(key))
    _cache().set(marker, asdict(started), PENDING_TTL)
    try:
        value = import_string(task)(**kwargs)
    except Exception as exc:
        failed = Pending(status="failed", since=started.since, job=started.job, error=f"{type(exc).__name__}: {exc}")
        _cache().set(marker, asdict(failed), FAILED_TTL)
        raise
    computed[task.rsplit(".", 1)[-1]] += 1
    _cache().set(key, value, TIMEOUT)
    _cache().delete(marker)
