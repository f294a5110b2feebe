import pytest
from django.urls import reverse


@pytest.mark.django_db(transaction=True)
def test_it_reports_every_part_and_503_without_workers(client, redis_client):
    response = client.get(reverse("healthz"))
    body = response.json()
    assert body["database"]["ok"] is True
    assert body["redis"]["ok"] is True
    assert body["workers"]["queues"] == {"runs": 0, "judge": 0, "default": 0}
    assert "sandbox" in body and "backend" in body["sandbox"] or "error" in body["sandbox"]
    assert response.status_code == 503  # no live worker on any queue


@pytest.mark.django_db(transaction=True)
def test_it_counts_live_workers_per_queue(client, redis_client):
    import django_rq
    from rq import Worker

    workers = []
    for name in ("runs", "judge", "default"):
        worker = Worker([django_rq.get_queue(name)], connection=django_rq.get_connection(name), name=f"w-{name}")
        worker.register_birth()
        workers.append(worker)
    try:
        body = client.get(reverse("healthz")).json()
        assert body["workers"] == {"ok": True, "queues": {"runs": 1, "judge": 1, "default": 1}}
    finally:
        for worker in workers:
            worker.register_death()


@pytest.mark.django_db
def test_it_reports_redis_down(client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    response = client.get(reverse("healthz"))
    assert response.status_code == 503
    assert response.json()["redis"]["ok"] is False
