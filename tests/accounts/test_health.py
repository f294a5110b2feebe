import pytest
from django.urls import reverse


@pytest.mark.django_db(transaction=True)
def test_it_reports_every_part_to_admins_and_503_without_workers(client_for, admin_user, redis_client):
    response = client_for(admin_user).get(reverse("healthz"))
    body = response.json()
    assert body["database"]["ok"] is True
    assert body["redis"]["ok"] is True
    assert body["workers"]["queues"] == {"runs": 0, "judge": 0, "default": 0, "gpu": 0}
    assert "sandbox" in body and "backend" in body["sandbox"] or "error" in body["sandbox"]
    assert response.status_code == 503  # no live worker on any queue


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("who", [None, "researcher", "reviewer"])
def test_it_tells_everyone_else_only_whether_it_is_up(client_for, who, request, redis_client):
    user = request.getfixturevalue(who) if who else None
    response = client_for(user).get(reverse("healthz"))
    assert response.status_code == 503  # down (no worker) is still said, with the same status
    assert response.json() == {"ok": False}
    assert response["Cache-Control"].startswith("max-age=0")


@pytest.mark.django_db(transaction=True)
def test_it_counts_live_workers_per_queue(client_for, admin_user, redis_client):
    import django_rq
    from rq import Worker

    workers = []
    for name in ("runs", "judge", "default"):
        worker = Worker([django_rq.get_queue(name)], connection=django_rq.get_connection(name), name=f"w-{name}")
        worker.register_birth()
        workers.append(worker)
    try:
        body = client_for(admin_user).get(reverse("healthz")).json()
        assert body["workers"] == {"ok": True, "queues": {"runs": 1, "judge": 1, "default": 1, "gpu": 0}}
        # Anyone gets the same verdict (up only if the sandbox backend is available too), never the parts.
        anonymous = client_for(None).get(reverse("healthz"))
        assert anonymous.json() == {"ok": body["ok"]} and anonymous.status_code == (200 if body["ok"] else 503)
    finally:
        for worker in workers:
            worker.register_death()


@pytest.mark.django_db
def test_it_reports_redis_down(client_for, admin_user, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    response = client_for(admin_user).get(reverse("healthz"))
    assert response.status_code == 503
    assert response.json()["redis"]["ok"] is False
    anonymous = client_for(None).get(reverse("healthz"))
    assert anonymous.status_code == 503 and anonymous.json() == {"ok": False}


@pytest.mark.django_db
def test_it_refuses_other_methods(client_for, admin_user):
    assert client_for(admin_user).post(reverse("healthz")).status_code == 405
    assert client_for(None).post(reverse("healthz")).status_code == 405


@pytest.mark.django_db(transaction=True)
def test_it_needs_a_gpu_worker_only_on_a_host_that_offers_gpus(client_for, admin_user, redis_client, settings):
    import django_rq
    from rq import Worker

    workers = [
        Worker([django_rq.get_queue(name)], connection=redis_client, name=f"w-{name}")
        for name in ("runs", "judge", "default")
    ]
    for worker in workers:
        worker.register_birth()
    try:
        settings.GPU_DEVICES = "none"
        assert client_for(admin_user).get(reverse("healthz")).json()["workers"]["ok"] is True
        settings.GPU_DEVICES = "0"
        body = client_for(admin_user).get(reverse("healthz")).json()["workers"]
        assert body["ok"] is False and body["error"] == "no live worker for queue(s): gpu"
    finally:
        for worker in workers:
            worker.register_death()
