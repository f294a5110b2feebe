"""The judge lab's statistics pages off the request (issue 30): a cold page queues one job and
answers at once with a page that refreshes itself; the job's result is served from the agreement
cache until the data changes; a failed job is shown as it failed; one user can start only so many
cold computations a minute; and nobody who may not read a page can make it compute."""

from __future__ import annotations

import time

import django_rq
import pytest
from django.urls import reverse
from rq.job import Job

from accounts.services import user_create
from agreement import cache, jobs
from judge.models import Judgment
from review.models import HallucinationLabel
from tests.agreement.lab.client import committed_get, run_statistics_jobs
from tests.judge.factories import make_judgment, make_stepwise_item, make_task, rubric
from tests.review.factories import make_paper

pytestmark = pytest.mark.django_db
CLAUDE, GEMINI = "anthropic:claude-3-7-sonnet-20250219", "google:gemini-2.5-pro-preview-03-25"
KEYS = ("consistency", "clarity", "novelty", "feasibility", "significance", "overall")
JUDGES = reverse("agreement:lab_judge_pair", args=["idea"])
# Every statistics page of the lab that needs no object of its own (an experiment's page: below).
ADMIN_PAGES = [
    reverse("agreement:lab_hallucination"),
    reverse("agreement:lab_fabrication"),
    reverse("agreement:lab_report"),
]
JUDGE_PAGES = [JUDGES, reverse("agreement:lab_judge_pair_download", args=["idea", "csv"])]


def _queued() -> list[str]:
    return django_rq.get_queue("default").job_ids


@pytest.fixture
def ideas(db):
    """Eight stepwise ideas, each scored by both judges."""
    idea = rubric("idea")
    for i in range(8):
        item = make_stepwise_item(make_task(f"iclr2025_s{i}"), ("claude-3-7", "gemini-2.5", "o4-mini")[i % 3], "idea")
        make_judgment(item, idea, CLAUDE, dict.fromkeys(KEYS, 4 + i % 5))
        make_judgment(item, idea, GEMINI, dict.fromkeys(KEYS, 5 + i % 4))
    return idea


def _wait_for_a_fresh_minute() -> None:
    """The limit counts per calendar minute: start a test of it with most of a minute left."""
    if time.time() % 60 > 45:
        time.sleep(61 - time.time() % 60)


def test_it_answers_a_cold_page_at_once_and_queues_one_job_for_every_request(
    ideas, admin_user, researcher, client_for, redis_client
):
    first = committed_get(client_for(admin_user), JUDGES)
    html = first.content.decode()
    assert first.status_code == 202 and first["Retry-After"] == "3"
    assert 'id="statistics-pending"' in html and '<meta http-equiv="refresh" content="3">' in html
    assert "Cohen" not in html  # nothing of the result yet
    assert len(_queued()) == 1
    # More requests while it is queued, from the same and other users: still one job.
    for user in (admin_user, researcher, researcher):
        assert committed_get(client_for(user), JUDGES).status_code == 202
    assert len(_queued()) == 1
    run_statistics_jobs()
    done = client_for(researcher).get(JUDGES)
    page = done.content.decode()
    assert done.status_code == 200 and "statistics-pending" not in page
    assert "Self-preference between the judges" in page and "Cohen&#x27;s kappa, quadratic weights" in page
    csv = client_for(researcher).get(JUDGE_PAGES[1])  # the download reads the same result
    assert csv.status_code == 200 and "kappa_quadratic" in csv.content.decode()
    assert _queued() == []


def test_a_change_of_the_data_gives_a_new_state_that_is_computed_again(ideas, admin_user, client_for, redis_client):
    client = client_for(admin_user)
    committed_get(client, JUDGES)
    run_statistics_jobs()
    assert "8 ideas" in client.get(JUDGES).content.decode()
    before = cache.computed["judges_compute"]
    assert client.get(JUDGES).status_code == 200 and cache.computed["judges_compute"] == before  # cached
    item = make_stepwise_item(make_task("iclr2025_new"), "claude-3-7", "idea")
    make_judgment(item, ideas, CLAUDE, dict.fromkeys(KEYS, 9))
    make_judgment(item, ideas, GEMINI, dict.fromkeys(KEYS, 2))
    assert committed_get(client, JUDGES).status_code == 202 and len(_queued()) == 1
    run_statistics_jobs()
    assert "9 ideas" in client.get(JUDGES).content.decode() and cache.computed["judges_compute"] == before + 1
    # A judgment that finishes later moves the state too.
    late = make_judgment(item, ideas, "openai:o4-mini", dict.fromkeys(KEYS, 5))
    Judgment.objects.filter(pk=late.pk).update(status="running", finished_at=None)
    committed_get(client, JUDGES)
    run_statistics_jobs()
    Judgment.objects.filter(pk=late.pk).update(status="succeeded", finished_at=late.created_at)
    assert committed_get(client, JUDGES).status_code == 202


@pytest.mark.parametrize("url", ADMIN_PAGES)
def test_every_admin_statistics_page_is_queued_then_served_from_the_cache(url, admin_user, client_for, redis_client):
    client = client_for(admin_user)
    assert committed_get(client, url).status_code == 202 and len(_queued()) == 1
    run_statistics_jobs()
    assert client.get(url).status_code == 200
    assert client.get(url).status_code == 200 and _queued() == []


def test_an_experiments_probes_are_queued_then_shown(admin_user, client_for, redis_client):
    import uuid

    from judge.experiments import judge_config_create
    from judge.models import GoldSet, JudgeExperiment

    gold = GoldSet.objects.create(name="g", stage="end2end", reference=str(uuid.uuid4()))  # its campaign is gone
    config = judge_config_create(name="c", judge_model="anthropic:claude-sonnet-4-5", rubric=rubric("end2end"))
    experiment = JudgeExperiment.objects.create(config=config, gold_set=gold, status="finished")
    url = reverse("agreement:lab_experiment", args=[experiment.code])
    client = client_for(admin_user)
    assert committed_get(client, url).status_code == 202
    run_statistics_jobs()
    page = client.get(url)
    assert page.status_code == 200 and "names no campaign with its human reviews" in page.content.decode()
    assert client.get(url + "?format=json").status_code == 200


def test_a_failed_job_is_shown_as_it_failed(admin_user, client_for, redis_client):
    """A stored audit without its claims count (bad data in the database) fails the fabrication job."""
    paper = make_paper(slug="iclr2025_broken", figures={})
    paper.data = {"fabrication_audit": {"version": "fabrication audit v1", "flagged": 1}}
    paper.save()
    HallucinationLabel.objects.create(system="MLR Agent", workshop="iclr2025_broken", kind="faked_results",
                                      value="yes", artifact=paper)  # fmt: skip
    url = reverse("agreement:lab_fabrication")
    client = client_for(admin_user)
    assert committed_get(client, url).status_code == 202
    job_id = _queued()[0]
    run_statistics_jobs()
    failed = client.get(url)
    text = failed.content.decode()
    assert failed.status_code == 500 and 'id="statistics-failed"' in text
    assert "KeyError: &#x27;claims&#x27;" in text and 'http-equiv="refresh"' not in text
    assert Job.fetch(job_id, connection=redis_client).is_failed  # RQ keeps it too
    assert client.get(url).status_code == 500 and _queued() == []  # shown, not retried at once


def test_a_job_the_queue_lost_is_reported_not_waited_for(admin_user, client_for, redis_client):
    url = reverse("agreement:lab_hallucination")
    client = client_for(admin_user)
    assert committed_get(client, url).status_code == 202
    redis_client.delete(f"rq:job:{_queued()[0]}")  # as after a worker's host died with it
    raw = cache._cache().get("pending:" + _pending_key_of(url, client))
    raw["since"] = "2000-01-01T00:00:00+00:00"  # set long ago
    cache._cache().set("pending:" + _pending_key_of(url, client), raw)
    lost = client.get(url)
    assert lost.status_code == 500 and "the job was lost" in lost.content.decode()


def _pending_key_of(url: str, client) -> str:
    from agreement.lab import statistics as lab_stats

    assert url == reverse("agreement:lab_hallucination")
    return lab_stats.hallucination_key()


def test_one_user_past_the_limit_gets_429_and_another_user_does_not(admin_user, client_for, redis_client, settings):
    settings.LAB_COLD_PER_MINUTE = 2
    _wait_for_a_fresh_minute()
    other_admin = user_create(username="olga_admin", role="admin")
    fabrication = reverse("agreement:lab_fabrication")
    client = client_for(admin_user)
    for n in (1, 2):
        assert committed_get(client, f"{fabrication}?min_flags={n}").status_code == 202
    assert committed_get(client, f"{fabrication}?min_flags=1").status_code == 202  # a poll starts nothing
    limited = committed_get(client, f"{fabrication}?min_flags=3")
    assert limited.status_code == 429 and 0 < int(limited["Retry-After"]) <= 60
    assert "the most one person may start" in limited.content.decode()
    assert len(_queued()) == 2  # the refused request queued nothing
    assert committed_get(client_for(other_admin), f"{fabrication}?min_flags=3").status_code == 202
    run_statistics_jobs()
    for n in (1, 2, 3):  # cached results are not limited
        assert client.get(f"{fabrication}?min_flags={n}").status_code == 200
    assert committed_get(client, f"{fabrication}?min_flags=4").status_code == 429


@pytest.mark.parametrize("url", ADMIN_PAGES)
def test_the_admin_pages_refuse_everyone_else_before_computing_anything(
    url, admin_user, researcher, other_researcher, reviewer, client_for, redis_client
):
    for user in (researcher, other_researcher, reviewer):
        assert committed_get(client_for(user), url).status_code == 403
    anonymous = committed_get(client_for(None), url)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert client_for(admin_user).post(url).status_code == 405
    assert _queued() == []  # no refused request started a computation
    assert committed_get(client_for(admin_user), url).status_code == 202


@pytest.mark.parametrize("url", JUDGE_PAGES)
def test_the_judge_pages_are_for_researchers_and_admins_and_never_compute_for_a_reviewer(
    url, ideas, admin_user, researcher, reviewer, client_for, redis_client
):
    assert committed_get(client_for(reviewer), url).status_code == 403
    assert committed_get(client_for(None), url).status_code == 302
    assert client_for(researcher).post(url).status_code == 405
    assert _queued() == []
    assert committed_get(client_for(researcher), url).status_code == 202
    assert committed_get(client_for(admin_user), url).status_code == 202 and len(_queued()) == 1
    bad = url.replace("/idea/", "/paper/")
    assert committed_get(client_for(researcher), bad).status_code == 404 and len(_queued()) == 1


def test_an_experiment_page_checks_the_code_and_the_role_before_computing(
    admin_user, researcher, reviewer, client_for, redis_client
):
    import uuid

    from judge.experiments import judge_config_create
    from judge.models import GoldSet, JudgeExperiment

    gold = GoldSet.objects.create(name="g", stage="end2end", reference=str(uuid.uuid4()))
    config = judge_config_create(name="c", judge_model="anthropic:claude-sonnet-4-5", rubric=rubric("end2end"))
    experiment = JudgeExperiment.objects.create(config=config, gold_set=gold)
    url = reverse("agreement:lab_experiment", args=[experiment.code])
    for user in (researcher, reviewer):
        assert committed_get(client_for(user), url).status_code == 403
    assert committed_get(client_for(None), url).status_code == 302
    assert client_for(admin_user).post(url).status_code == 405
    other = reverse("agreement:lab_experiment", args=[uuid.uuid4()])
    assert committed_get(client_for(admin_user), other).status_code == 404
    assert _queued() == []
    assert committed_get(client_for(admin_user), url).status_code == 202


def test_a_job_runs_only_the_labs_statistics(redis_client):
    """A job names the function it runs; only lab_stats' are accepted (a forged job runs nothing)."""
    with pytest.raises(ValueError, match="not a statistics task"):
        jobs.compute_statistics(key="lab:x", task="os.system", params={"command": "true"})
    assert cache._cache().get("lab:x") is None
