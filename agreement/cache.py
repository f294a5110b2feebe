"""Agreement results cached per (campaign state, settings): the page and its three downloads
compute the analysis once.

The campaign state is a fingerprint of everything the analysis reads, taken with a few aggregate
queries (counts, id sums, latest timestamps; no rows, no score JSON): the campaign's rubric,
status and import faults, its items, its submitted reviews (slots, last save) and the judgments
of its items (per status, finish time). A new review, judgment or status change gives a new key,
so a cached result is not served stale; old keys simply age out of the cache.

The cache is Django's "agreement" cache (settings.CACHES), in Redis: shared by the web processes
and the RQ workers. A failing cache backend never fails the agreement page: its result is then
computed and not stored.

The judge lab's statistics (seconds each over every stepwise judgment, issue 30) are not computed
in the request: `cached_or_queued` answers from the cache, or queues one job per key (a SET NX
marker deduplicates concurrent requests) and says so; the page shows the job's progress until the
result is there, and its failure plainly. A user may start LAB_COLD_PER_MINUTE cold computations
a minute (`Limited` beyond); cached results and polls of a queued job cost nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import django_rq
import numpy as np
from django.conf import settings as django_settings
from django.core.cache import caches
from django.db.models import Count, Max, Sum
from django.utils import timezone
from django.utils.module_loading import import_string
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from agreement.data.pairing import pair
from agreement.data.selectors import campaign_agreement_data
from agreement.report.charts import chart_payload
from agreement.stats.suite import _nanmean, analyse
from judge.models import Judgment, Rubric
from review.models import Campaign, DisagreementTag, Review

log = logging.getLogger(__name__)
TIMEOUT = 6 * 3600
# What this process computed and rendered (cache misses); tests and the benchmark read it.
computed: Counter[str] = Counter()


@dataclass
class Analysis:
    """One cached analysis: the result, its charts, the workbench's per-item table, progress."""

    key: str
    result: dict[str, Any]
    charts: list[dict[str, Any]]
    items: dict[str, Any]
    progress: dict[str, Any]
    hit: bool = field(default=False, compare=False)


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


def campaign_state(*, campaign: Campaign, rubric: Rubric) -> tuple[str, dict[str, Any]]:
    """(fingerprint, progress) of what the analysis of `campaign` under `rubric` reads.

    Aggregates computed by the database (counts, id sums, latest timestamps), not rows: a
    cached page then costs a handful of small queries. Every way the app changes what the
    analysis reads moves one of them: a new or removed row changes a count and an id sum, a
    re-saved review its `updated_at` (drafts save with it, `auto_now` otherwise), a judgment
    that finishes its status counts and `finished_at`, a moved review its slot or item sum.
    """
    reviews = Review.objects.filter(assignment__campaign=campaign, status=Review.Status.SUBMITTED)
    items = campaign.items.aggregate(n=Count("id"), ids=Sum("id"), artifacts=Sum("artifact_id"))
    r = reviews.aggregate(
        n=Count("id"), ids=Sum("id"), latest=Max("updated_at"), slots=Sum("assignment__slot"),
        items=Sum("assignment__item_id"), reviewers=Sum("assignment__reviewer_id"),
    )  # fmt: skip
    # What the judge judged: the items' artifacts, or the agent runs of a trajectory campaign.
    target = "run" if campaign.is_trajectory else "artifact"
    judged = Judgment.objects.filter(
        **{f"{target}__campaign_items__campaign": campaign}, rubric=rubric, experiment__isnull=True
    )
    j = sorted(
        judged.values_list("status").annotate(
            n=Count("id"), ids=Sum("id"), done=Max("finished_at"), made=Max("created_at"), arts=Sum(f"{target}_id")
        )
    )
    k = campaign.reviewers_per_item
    fully = reviews.values("assignment__item_id").annotate(c=Count("id")).filter(c__gte=k).count()
    items_judged = judged.filter(status=Judgment.Status.SUCCEEDED).values(f"{target}_id").distinct().count()
    status = dict((row[0], row[1]) for row in j)
    state = [campaign.pk, campaign.rubric_id, rubric.pk, campaign.status, campaign.import_faults, items, r, j]
    progress = {
        "open": campaign.status != Campaign.Status.CLOSED,
        "items": items["n"],
        "reviews_submitted": r["n"],
        "reviews_expected": items["n"] * k,
        "items_fully_reviewed": fully,
        "items_judged": items_judged,
        "judgments_pending": status.get(Judgment.Status.QUEUED, 0) + status.get(Judgment.Status.RUNNING, 0),
    }
    return hashlib.sha256(json.dumps(state, default=str, sort_keys=True).encode()).hexdigest(), progress


def tags_state(*, campaign: Campaign) -> str:
    rows = list(DisagreementTag.objects.filter(campaign=campaign).order_by("id").values_list("id", "updated_at"))
    return hashlib.sha256(repr(rows).encode()).hexdigest()[:16]


def settings_key(settings: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _item_table(data: Any, codes: list[str]) -> dict[str, Any]:
    """Per item and criterion: human scores' mean and count, each judge's score (workbench)."""
    n_items, n_crit = len(data.items), len(data.criteria)
    sums = np.zeros((n_items, n_crit))
    counts = np.zeros((n_items, n_crit))
    ok = ~np.isnan(data.human_scores)
    np.add.at(sums, data.human_item, np.where(ok, data.human_scores, 0.0))
    np.add.at(counts, data.human_item, ok.astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        human_mean = sums / counts
    return {
        "codes": codes,
        "labels": list(data.items),
        "systems": list(data.item_system),
        "criteria": list(data.criteria),
        "criterion_keys": list(data.meta.get("criterion_keys", [])),
        "judges": list(data.judges),
        "human_mean": human_mean,
        "human_count": counts.astype(int),
        "judge": data.judge_scores,  # (items, judges, criteria)
        "judges_mean": _nanmean(data.judge_scores, axis=1),
    }


def campaign_analysis(*, campaign: Campaign, rubric: Rubric, settings: dict[str, Any]) -> Analysis:
    """The analysis of `campaign` under `settings`, from the cache when the state is unchanged."""
    state, progress = campaign_state(campaign=campaign, rubric=rubric)
    key = f"analysis:{campaign.code}:{state[:24]}:{settings_key(settings)}"
    cached = _get(key)
    if cached is not None:
        cached.hit = True
        cached.progress = progress
        return cached
    computed["analysis"] += 1
    data = campaign_agreement_data(campaign=campaign, rubric=rubric)
    codes = data.meta.pop("item_codes", [])
    paired = pair(data, settings["pairing"])
    result = analyse(
        paired,
        n_boot=settings["bootstrap"],
        seed=settings["seed"],
        margin=settings["margin"],
        alpha=settings["alpha"],
        epsilon=settings["epsilon"],
        threshold=settings["threshold"],
        min_items=settings["min_items"],
    )
    analysis = Analysis(key, result, chart_payload(result, paired), _item_table(data, codes), progress)
    _set(key, analysis)
    return analysis


def cached_analysis(*, campaign: Campaign, rubric: Rubric, settings: dict[str, Any]) -> Analysis | None:
    """The analysis of `campaign`'s current state under `settings` if one is cached; never computes."""
    state, progress = campaign_state(campaign=campaign, rubric=rubric)
    cached = _get(f"analysis:{campaign.code}:{state[:24]}:{settings_key(settings)}")
    if cached is not None:
        cached.progress = progress
    return cached


def rendered(analysis: Analysis, fmt: str, tags_key: str, render: Callable[[], str]) -> tuple[bytes, bool]:
    """A download of `analysis` in `fmt` (including the tags as of `tags_key`), rendered once.
    Kept as UTF-8 bytes: a cached HTML report is ~5 MB, and bytes skip re-encoding per request."""
    key = f"{analysis.key}:{fmt}:{tags_key}"
    body = _get(key)
    if body is not None:
        return body, True
    computed[f"render:{fmt}"] += 1
    body = render().encode("utf-8")
    _set(key, body)
    return body, False


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
