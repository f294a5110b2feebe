"""Endpoint pages: the permission checklist of every view, the write-only key, the test button
(provider reply faked at the transport: 200, 401, connection refused), the policy and deletion."""

from __future__ import annotations

import logging
import uuid

import pytest
from django.urls import reverse

from benchmark.models import AgentConfig, EndpointPolicy, ModelEndpoint

pytestmark = pytest.mark.django_db

KEY = "sk-admin-STORED-9f8e7d6c5b4a"
MISSING = uuid.UUID("00000000-0000-0000-0000-000000000000")


@pytest.fixture
def shared(db):
    endpoint = ModelEndpoint(
        name="vault", provider="openai", key_source="stored", offers=[{"model": "gpt-4o", "input_per_mtok": 2.5,
        "output_per_mtok": 10.0}],
    )  # fmt: skip
    endpoint.set_key(KEY)
    endpoint.save()
    return endpoint


@pytest.fixture
def personal(researcher):
    return ModelEndpoint.objects.create(
        name="mine", scope="personal", owner=researcher, provider="compat", base_url="http://93.184.216.34/v1",
        offers=[{"model": "m"}],
    )  # fmt: skip


def allow(networks: str = "") -> None:
    policy = EndpointPolicy.current()
    policy.researcher_endpoints, policy.allowed_networks = True, networks
    policy.save()


# (view, method, which endpoint) -> who -> status. "owner" owns the personal endpoint; researchers
# reach only their own endpoints (a 404 for the rest); reviewers never; anonymous users log in.
CHECKLIST = [
    ("endpoint_list", "get", None, {"admin": 200, "owner": 200, "other": 200, "reviewer": 403, "anonymous": 302}),
    ("endpoint_new", "get", None, {"admin": 200, "owner": 200, "other": 200, "reviewer": 403, "anonymous": 302}),
    ("endpoint_detail", "get", "shared", {"admin": 200, "owner": 404, "other": 404, "reviewer": 403, "anonymous": 302}),
    (
        "endpoint_detail",
        "get",
        "personal",
        {"admin": 200, "owner": 200, "other": 404, "reviewer": 403, "anonymous": 302},
    ),
    ("endpoint_edit", "get", "shared", {"admin": 200, "owner": 404, "other": 404, "reviewer": 403, "anonymous": 302}),
    ("endpoint_edit", "get", "personal", {"admin": 200, "owner": 200, "other": 404, "reviewer": 403, "anonymous": 302}),
    ("endpoint_test", "post", "shared", {"admin": 302, "owner": 404, "other": 404, "reviewer": 403, "anonymous": 302}),
    (
        "endpoint_test",
        "post",
        "personal",
        {"admin": 302, "owner": 302, "other": 404, "reviewer": 403, "anonymous": 302},
    ),
    (
        "endpoint_delete",
        "post",
        "personal",
        {"admin": 302, "owner": 302, "other": 404, "reviewer": 403, "anonymous": 302},
    ),
    ("endpoint_policy", "post", None, {"admin": 302, "owner": 403, "other": 403, "reviewer": 403, "anonymous": 302}),
]


@pytest.mark.parametrize(("view", "method", "which", "expected"), CHECKLIST, ids=lambda v: str(v)[:20])
@pytest.mark.parametrize("who", ["admin", "owner", "other", "reviewer", "anonymous"])
def test_it_applies_the_checklist_to_every_endpoint_view(
    view, method, which, expected, who, people, shared, personal, client_for, fake_llm
):
    allow()
    target = {"shared": shared, "personal": personal}.get(which)
    url = reverse(f"benchmark:{view}", args=[target.code] if target else [])
    data = {"model": "gpt-4o" if which == "shared" else "m"} if view == "endpoint_test" else {}
    if view == "endpoint_policy":
        data = {"researcher_endpoints": "on", "allowed_networks": ""}
    response = getattr(client_for(people[who]), method)(url, data)
    assert response.status_code == expected[who]
    if who == "anonymous":
        assert response["Location"].startswith(reverse("accounts:login"))
    if target is not None and expected[who] == 302 and who != "anonymous" and view != "endpoint_delete":
        assert response["Location"] == reverse("benchmark:endpoint_detail", args=[target.code])


@pytest.mark.parametrize(
    ("view", "method"),
    [
        ("endpoint_detail", "get"),
        ("endpoint_edit", "get"),
        ("endpoint_test", "post"),
        ("endpoint_delete", "post"),
    ],
)
def test_it_answers_404_for_a_bad_code_and_405_for_a_wrong_method(view, method, admin_user, client_for, shared):
    client = client_for(admin_user)
    assert getattr(client, method)(reverse(f"benchmark:{view}", args=[MISSING])).status_code == 404
    wrong = "get" if method == "post" else "put"
    assert getattr(client, wrong)(reverse(f"benchmark:{view}", args=[shared.code])).status_code == 405
    assert client.get(f"/endpoints/{shared.code}x/").status_code == 404
    assert client.get(reverse("benchmark:endpoint_policy")).status_code == 405
    assert client.delete(reverse("benchmark:endpoint_list")).status_code == 405
    assert client.put(reverse("benchmark:endpoint_new")).status_code == 405


def test_it_keeps_researchers_out_of_endpoint_forms_while_the_admin_does_not_allow_them(
    researcher, personal, client_for
):
    client = client_for(researcher)
    assert client.get(reverse("benchmark:endpoint_new")).status_code == 403
    assert client.get(reverse("benchmark:endpoint_edit", args=[personal.code])).status_code == 403
    assert client.post(reverse("benchmark:endpoint_test", args=[personal.code]), {"model": "m"}).status_code == 403
    page = client.get(reverse("benchmark:endpoint_list")).content.decode()
    assert "Researcher-supplied endpoints are turned off" in page and "Add your own endpoint" not in page
    # Deleting one's own stays possible: it removes, it calls nothing.
    assert client.post(reverse("benchmark:endpoint_delete", args=[personal.code])).status_code == 302


def test_it_saves_a_key_and_never_shows_it_again(admin_user, client_for, caplog):
    caplog.set_level(logging.DEBUG)
    client = client_for(admin_user)
    form = {
        "name": "Lab vLLM", "provider": "compat", "base_url": "http://gpu-box:8000/v1",
        "offers_text": "llama-3.1-70b 0.5 0.8\nqwen2.5", "key_source": "stored", "api_key": KEY, "enabled": "on",
    }  # fmt: skip
    response = client.post(reverse("benchmark:endpoint_new"), form)
    endpoint = ModelEndpoint.objects.get(name="Lab vLLM")
    assert response.status_code == 302 and response["Location"] == f"/endpoints/{endpoint.code}/"
    assert endpoint.offers == [
        {"model": "llama-3.1-70b", "input_per_mtok": 0.5, "output_per_mtok": 0.8},
        {"model": "qwen2.5", "input_per_mtok": None, "output_per_mtok": None},
    ]
    assert (endpoint.scope, endpoint.owner, endpoint.has_stored_key) == ("shared", admin_user, True)
    pages = [
        client.get(reverse("benchmark:endpoint_detail", args=[endpoint.code])),
        client.get(reverse("benchmark:endpoint_edit", args=[endpoint.code])),
        client.get(reverse("benchmark:endpoint_list")),
        client.get(reverse("admin:benchmark_modelendpoint_change", args=[endpoint.pk])),
        client.get(reverse("admin:benchmark_modelendpoint_changelist")),
    ]
    assert [p.status_code for p in pages] == [200] * 5
    for page in pages:
        text = page.content.decode()
        assert KEY not in text and endpoint.key_ciphertext not in text
    assert "stored encrypted, saved" in pages[0].content.decode()
    # Saving again with the key field empty keeps the key; a bad save does not echo it either.
    client.post(reverse("benchmark:endpoint_edit", args=[endpoint.code]), {**form, "api_key": ""})
    endpoint.refresh_from_db()
    assert endpoint.has_stored_key
    bad = client.post(reverse("benchmark:endpoint_edit", args=[endpoint.code]), {**form, "offers_text": "bad name!"})
    assert bad.status_code == 400 and "line 1" in bad.content.decode() and KEY not in bad.content.decode()
    assert KEY not in caplog.text


def test_it_explains_bad_endpoint_forms_where_they_are_wrong(admin_user, client_for):
    client = client_for(admin_user)
    base = {"name": "x", "provider": "openai", "offers_text": "gpt-4o", "key_source": "none", "enabled": "on"}
    cases = [
        ({"provider": "compat"}, "needs the server&#x27;s base URL"),
        ({"base_url": "ftp://x/"}, "http:// or https://"),
        ({"base_url": "http://u:p@x/v1"}, "must not carry a user name or password"),
        ({"key_source": "env", "key_env_var": "SECRET_KEY"}, "one of Referee&#x27;s own secrets"),
        ({"key_source": "env", "key_env_var": "lower case"}, "name the environment variable"),
        ({"key_source": "stored"}, "enter the key to store"),
        ({"offers_text": "gpt-4o 3"}, "followed by two prices"),
        ({"offers_text": "gpt-4o 3 x"}, "&#x27;x&#x27; is not a price"),
        ({"offers_text": ""}, "list at least one model"),
    ]
    for change, message in cases:
        response = client.post(reverse("benchmark:endpoint_new"), {**base, **change})
        assert response.status_code == 400 and message in response.content.decode(), (change, message)
    assert not ModelEndpoint.objects.filter(name="x").exists()


def test_it_shows_the_providers_words_when_the_endpoint_answers(admin_user, client_for, shared, fake_llm):
    client = client_for(admin_user)
    response = client.post(reverse("benchmark:endpoint_test", args=[shared.code]), {"model": "gpt-4o"})
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "answered" in page and "HTTP 200" in page and "The model replied:" in page
    assert '<pre class="check-words">ok</pre>' in page
    (check,) = fake_llm.checks
    assert check["url"] == "https://api.openai.com/v1/chat/completions"
    assert check["body"]["max_completion_tokens"] == 16 and check["headers"]["authorization"] == f"Bearer {KEY}"
    shared.refresh_from_db()
    assert shared.last_check["ok"] is True and shared.last_check["by"] == admin_user.username


def test_it_shows_the_providers_words_when_the_endpoint_refuses_the_key(admin_user, client_for, shared, fake_llm):
    fake_llm.check_error(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
    client = client_for(admin_user)
    page = client.post(
        reverse("benchmark:endpoint_test", args=[shared.code]), {"model": "gpt-4o"}, follow=True
    ).content.decode()
    assert "failed" in page and "HTTP 401" in page and "The provider's words:" in page
    assert "Incorrect API key provided" in page and "https://api.openai.com/v1" in page


def test_it_shows_the_providers_words_when_nobody_listens(admin_user, client_for, shared, fake_llm):
    fake_llm.check_refused()
    page = (
        client_for(admin_user)
        .post(reverse("benchmark:endpoint_test", args=[shared.code]), {"model": "gpt-4o"}, follow=True)
        .content.decode()
    )
    assert "failed" in page and "no HTTP answer" in page
    assert "could not connect" in page and "Connection refused" in page


def test_it_tests_nothing_without_a_key_and_says_why(admin_user, client_for, fake_llm, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    openai = fake_llm.endpoints["openai"]
    page = (
        client_for(admin_user)
        .post(reverse("benchmark:endpoint_test", args=[openai.code]), {"model": "gpt-4o"}, follow=True)
        .content.decode()
    )
    assert "is not set on this server (OPENAI_API_KEY)" in page and fake_llm.checks == []
    bad = client_for(admin_user).post(reverse("benchmark:endpoint_test", args=[openai.code]), {"model": "nope"})
    assert bad.status_code == 302 and fake_llm.checks == []


def test_it_hides_key_details_of_shared_endpoints_from_researchers(researcher, client_for, shared, fake_llm):
    page = client_for(researcher).get(reverse("benchmark:endpoint_list")).content.decode()
    assert "vault" in page and "gpt-4o" in page and "$2.5" in page
    assert "environment variable" not in page and "OPENAI_API_KEY" not in page and "stored encrypted" not in page


def test_it_lets_an_admin_switch_researcher_endpoints_and_open_ranges(admin_user, client_for):
    client = client_for(admin_user)
    url = reverse("benchmark:endpoint_policy")
    client.post(url, {"researcher_endpoints": "on", "allowed_networks": "10.20.0.0/16, fd00::/8"})
    policy = EndpointPolicy.current()
    assert policy.researcher_endpoints and policy.networks() == ["10.20.0.0/16", "fd00::/8"]
    assert policy.updated_by == admin_user
    page = client.post(url, {"allowed_networks": "10.20.0.0/33"}, follow=True).content.decode()
    assert "is not an IP range" in page
    assert EndpointPolicy.current().researcher_endpoints  # the bad save changed nothing
    client.post(url, {"allowed_networks": ""})
    assert not EndpointPolicy.current().researcher_endpoints


def test_it_lets_a_researcher_add_their_own_endpoint_when_allowed(researcher, client_for, monkeypatch):
    allow()
    from benchmark.llm.netguard import override_resolver
    from tests.benchmark.llm.test_netguard import answers

    form = {"name": "mine", "provider": "compat", "base_url": "https://llm.example.org/v1", "offers_text": "m",
            "key_source": "none", "enabled": "on"}  # fmt: skip
    with override_resolver(answers("93.184.216.34")):
        response = client_for(researcher).post(reverse("benchmark:endpoint_new"), form)
    mine = ModelEndpoint.objects.get(name="mine")
    assert response.status_code == 302 and (mine.scope, mine.owner) == ("personal", researcher)
    with override_resolver(answers("10.0.0.8")):
        response = client_for(researcher).post(reverse("benchmark:endpoint_edit", args=[mine.code]), form)
    assert response.status_code == 400 and "llm.example.org resolves to 10.0.0.8" in response.content.decode()


def test_it_deletes_only_unused_endpoints(admin_user, client_for, shared):
    AgentConfig.objects.create(name="openai:gpt-4o", model="openai:gpt-4o", endpoint=shared)
    client = client_for(admin_user)
    page = client.post(reverse("benchmark:endpoint_delete", args=[shared.code]), follow=True).content.decode()
    assert "disable it instead" in page and ModelEndpoint.objects.filter(pk=shared.pk).exists()
    unused = ModelEndpoint.objects.create(name="spare", provider="openai", offers=[{"model": "gpt-4o"}])
    response = client.post(reverse("benchmark:endpoint_delete", args=[unused.code]))
    assert response.status_code == 302 and not ModelEndpoint.objects.filter(pk=unused.pk).exists()


def test_it_keeps_the_key_write_only_in_the_django_admin(admin_user, client_for, caplog):
    caplog.set_level(logging.DEBUG)
    client = client_for(admin_user)
    form = {
        "name": "via admin", "provider": "anthropic", "base_url": "", "enabled": "on", "offers_text": "claude-x 1 2",
        "key_source": "stored", "key_env_var": "", "api_key": KEY,
    }  # fmt: skip
    response = client.post(reverse("admin:benchmark_modelendpoint_add"), form)
    endpoint = ModelEndpoint.objects.get(name="via admin")
    assert response.status_code == 302 and endpoint.has_stored_key and endpoint.owner == admin_user
    change = client.get(reverse("admin:benchmark_modelendpoint_change", args=[endpoint.pk])).content.decode()
    assert "stored encrypted, saved" in change and KEY not in change and endpoint.key_ciphertext not in change
    bad = client.post(reverse("admin:benchmark_modelendpoint_add"), {**form, "name": "other", "offers_text": "x y"})
    assert bad.status_code == 200 and KEY not in bad.content.decode()
    assert KEY not in caplog.text
