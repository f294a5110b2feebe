"""The permission checklist for the foundation's pages."""

import pytest
from django.urls import reverse


@pytest.fixture
def personas(admin_user, researcher, reviewer):
    return {"admin": admin_user, "researcher": researcher, "reviewer": reviewer, "anonymous": None}


# page -> {persona: expected status}; 302 for anonymous means "sent to the login page".
PAGES = {
    "benchmark:run_list": {"admin": 200, "researcher": 200, "reviewer": 403, "anonymous": 302},
    "benchmark:task_list": {"admin": 200, "researcher": 200, "reviewer": 403, "anonymous": 302},
    "review:queue": {"admin": 403, "researcher": 403, "reviewer": 200, "anonymous": 302},
    "review:campaign_list": {"admin": 200, "researcher": 403, "reviewer": 403, "anonymous": 302},
    "accounts:password_change": {"admin": 200, "researcher": 200, "reviewer": 200, "anonymous": 302},
}


@pytest.mark.parametrize("page", sorted(PAGES))
@pytest.mark.parametrize("who", ["admin", "researcher", "reviewer", "anonymous"])
def test_it_applies_the_checklist(page, who, personas, client_for):
    response = client_for(personas[who]).get(reverse(page))
    assert response.status_code == PAGES[page][who]
    if response.status_code == 302:
        assert response["Location"].startswith(reverse("accounts:login"))


@pytest.mark.parametrize("page", ["benchmark:run_list", "benchmark:task_list", "review:queue", "review:campaign_list"])
def test_it_refuses_writes_on_read_only_pages(page, admin_user, reviewer, client_for):
    user = reviewer if page == "review:queue" else admin_user
    assert client_for(user).post(reverse(page)).status_code == 405


def test_it_sends_each_role_home_to_its_own_page(personas, client_for):
    assert client_for(personas["admin"]).get("/").status_code == 200
    researcher_home = client_for(personas["researcher"]).get("/")
    assert researcher_home.status_code == 200 and b"Your latest runs" in researcher_home.content
    assert client_for(personas["reviewer"]).get("/")["Location"] == reverse("review:queue")
    assert client_for(None).get("/")["Location"].startswith(reverse("accounts:login"))


def test_it_shows_the_login_page(client_for):
    response = client_for(None).get(reverse("accounts:login"))
    assert response.status_code == 200
    assert b'name="password"' in response.content


def test_it_logs_in_and_out(researcher, client):
    response = client.post(
        reverse("accounts:login"), {"username": researcher.username, "password": "pw-" + researcher.username}
    )
    assert response.status_code == 302
    assert client.get(reverse("benchmark:run_list")).status_code == 200
    assert client.post(reverse("accounts:logout")).status_code == 302
    assert client.get(reverse("benchmark:run_list")).status_code == 302


def test_it_keeps_the_rq_dashboard_for_admins(personas, client_for):
    assert client_for(personas["admin"]).get(reverse("admin:django_rq_home")).status_code == 200
    for who in ("researcher", "reviewer"):
        assert (
            client_for(personas[who]).get(reverse("admin:django_rq_home")).status_code == 302
        )  # staff-only login redirect
    assert client_for(None).get(reverse("admin:django_rq_home")).status_code == 302


def test_it_keeps_django_admin_for_admins(personas, client_for):
    assert client_for(personas["admin"]).get(reverse("admin:index")).status_code == 200
    assert client_for(personas["reviewer"]).get(reverse("admin:index")).status_code == 302
