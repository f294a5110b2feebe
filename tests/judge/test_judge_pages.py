"""Judge pages: the permission checklist, the panel (side by side, mean and spread, failures), requests, rubric versions."""

import json
import uuid

import django_rq
import pytest
from django.template import Context, Template
from django.test import RequestFactory
from django.urls import reverse

from benchmark.models import ModelEndpoint, ResearchRun
from judge.models import Judgment, Rubric
from tests.judge.factories import make_artifact, make_judgment, make_research_run, rubric

pytestmark = pytest.mark.django_db

CLAUDE = "anthropic:claude-sonnet-4-5"
GPT = "openai:gpt-4o"


@pytest.fixture
def judged(researcher):
    """The researcher's paper with two succeeded judges and one failed one."""
    paper = make_artifact(make_research_run(owner=researcher), "paper", "# Paper")
    end2end = rubric("end2end")
    first = make_judgment(paper, end2end, CLAUDE, {"novelty": 8, "clarity": 6}, cost=0.0123)
    make_judgment(paper, end2end, GPT, {"novelty": 5, "clarity": 6})
    failed = make_judgment(
        paper, end2end, "openai:o4-mini", None, error="no valid reply after 3 attempt(s)", raw_reply="I think 7/10"
    )
    return paper, first, failed


# who -> expected status for the pages about one researcher's artifact
ARTIFACT_PAGES = {"admin": 200, "owner": 200, "other": 403, "reviewer": 403, "anonymous": 302}


@pytest.mark.parametrize("who", sorted(ARTIFACT_PAGES))
@pytest.mark.parametrize("page", ["artifact_judgments", "judgment_detail"])
def test_it_applies_the_checklist_to_judgment_pages(page, who, judged, people, client_for):
    paper, first, _ = judged
    code = paper.code if page == "artifact_judgments" else first.code
    response = client_for(people[who]).get(reverse(f"judge:{page}", args=[code]))
    assert response.status_code == ARTIFACT_PAGES[who]
    if response.status_code == 302:
        assert response["Location"].startswith(reverse("accounts:login"))
    else:
        assert (CLAUDE.encode() in response.content) is (response.status_code == 200)


@pytest.mark.parametrize("page", ["artifact_judgments", "judgment_detail", "rubric_detail", "judgment_request"])
def test_it_answers_404_for_an_unknown_code(page, admin_user, client_for):
    client = client_for(admin_user)
    url = reverse(f"judge:{page}", args=[uuid.uuid4()])
    response = client.post(url) if page == "judgment_request" else client.get(url)
    assert response.status_code == 404
    assert client.get("/judge/judgments/not-a-uuid/").status_code == 404


@pytest.mark.parametrize(
    ("page", "method"),
    [
        ("artifact_judgments", "post"),
        ("judgment_detail", "post"),
        ("judgment_request", "get"),
        ("rubric_detail", "post"),
    ],
)
def test_it_refuses_the_wrong_method(page, method, judged, researcher, client_for):
    paper, first, _ = judged
    code = {"judgment_detail": first.code, "rubric_detail": first.rubric.code}.get(page, paper.code)
    response = getattr(client_for(researcher), method)(reverse(f"judge:{page}", args=[code]))
    assert response.status_code == 405


def test_it_shows_judges_side_by_side_with_mean_spread_and_the_failure(judged, researcher, client_for):
    paper, _, _ = judged
    html = client_for(researcher).get(reverse("judge:artifact_judgments", args=[paper.code])).content.decode()
    assert html.index(CLAUDE) < html.index(GPT) < html.index("openai:o4-mini")
    assert "2 of 3 judge(s) succeeded" in html
    assert ">6.50<" in html and "5-8" in html and "sd 2.12" in html and "n=2" in html  # novelty: 8 and 5
    assert "novelty by anthropic:claude-sonnet-4-5" in html  # justification, expandable
    assert "no valid reply after 3 attempt(s)" in html and "I think 7/10" in html
    assert 'id="request"' in html  # the owner may ask for more judges


def test_it_shows_the_failed_judgment_with_its_reply_and_no_scores(judged, researcher, client_for):
    _, _, failed = judged
    html = client_for(researcher).get(reverse("judge:judgment_detail", args=[failed.code])).content.decode()
    assert "I think 7/10" in html and "no valid reply after 3 attempt(s)" in html
    assert "<h2>Scores</h2>" not in html


def test_it_renders_the_panel_tag_for_the_owner_and_nothing_for_a_reviewer(judged, researcher, reviewer):
    paper, _, _ = judged
    template = Template("{% load judging %}[{% judgment_panel artifact %}]")
    request = RequestFactory().get("/")
    request.user = researcher
    assert "Judgments" in template.render(Context({"artifact": paper, "request": request}))
    request.user = reviewer
    rendered = template.render(Context({"artifact": paper, "request": request}))
    assert rendered.replace("\n", "") == "[]" and CLAUDE not in rendered


def test_it_lets_researchers_see_released_runs_but_not_request_on_them(other_researcher, admin_user, client_for):
    released = make_artifact(
        make_research_run(source=ResearchRun.Source.MLRBENCH, backbone="gemini"), "paper", "# Released"
    )
    make_judgment(released, rubric("end2end"), "google:gemini-2.5-pro-preview", {"novelty": 6}, source="mlrbench")
    response = client_for(other_researcher).get(reverse("judge:artifact_judgments", args=[released.code]))
    assert response.status_code == 200 and b"google:gemini-2.5-pro-preview" in response.content
    assert b'id="request"' not in response.content
    post = client_for(other_researcher).post(reverse("judge:judgment_request", args=[released.code]), {})
    assert post.status_code == 403
    assert (
        b'id="request"' in client_for(admin_user).get(reverse("judge:artifact_judgments", args=[released.code])).content
    )


@pytest.fixture
def judges(default_endpoints):
    """The default endpoints plus a local OpenAI-compatible server that serves any model name."""
    local = ModelEndpoint.objects.create(
        name="lab vLLM", provider="compat", base_url="http://gpu-box:8000/v1", open_models=True
    )
    return {**default_endpoints, "local": local}


def test_it_queues_judgments_from_the_form(
    judged, judges, researcher, client_for, redis_client, django_capture_on_commit_callbacks
):
    paper, _, _ = judged
    queue = django_rq.get_queue("judge")
    end2end = rubric("end2end")
    form = {
        "rubric": str(end2end.code),
        "judge_models": [f"{judges['anthropic'].code}/claude-sonnet-4-5"],
        "other_endpoint": str(judges["local"].code),
        "other_models": "llama-3.1-8b",
        "with_supplementary": "",
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(researcher).post(reverse("judge:judgment_request", args=[paper.code]), form)
    assert response.status_code == 302
    new = Judgment.objects.filter(status="queued").order_by("judge_model")
    assert [(j.judge_model, j.endpoint) for j in new] == [
        ("anthropic:claude-sonnet-4-5", judges["anthropic"]),
        ("compat:llama-3.1-8b", judges["local"]),
    ]
    assert all(not j.with_supplementary and j.requested_by == researcher for j in new)
    assert queue.count == 2


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"judge_models": []}, "choose at least one judge model"),
        ({"judge_models": [], "other_models": "llama"}, "choose the endpoint that serves these models"),
        ({"judge_models": ["openai:gpt-5-made-up"]}, "Select a valid choice"),
        ({"judge_models": [], "other_endpoint": "LOCAL", "other_models": "bad name!"}, "is not a model name"),
    ],
)
def test_it_rejects_a_bad_request_form_and_queues_nothing(form, message, judged, judges, researcher, client_for):
    paper, _, _ = judged
    if form.get("other_endpoint") == "LOCAL":
        form = {**form, "other_endpoint": str(judges["local"].code)}
    data = {"rubric": str(rubric("end2end").code), **form}
    response = client_for(researcher).post(reverse("judge:judgment_request", args=[paper.code]), data)
    assert response.status_code == 400 and message in response.content.decode()
    assert not Judgment.objects.filter(status="queued").exists()


def test_it_offers_only_rubrics_that_fit_the_artifact(judged, judges, researcher, client_for):
    paper, _, _ = judged
    idea = rubric("idea")
    claude = f"{judges['anthropic'].code}/claude-sonnet-4-5"
    response = client_for(researcher).post(
        reverse("judge:judgment_request", args=[paper.code]), {"rubric": str(idea.code), "judge_models": [claude]}
    )
    assert response.status_code == 400 and "Select a valid choice" in response.content.decode()


RUBRIC_PAGES = {"admin": 200, "owner": 200, "other": 200, "reviewer": 403, "anonymous": 302}


@pytest.mark.parametrize("who", sorted(RUBRIC_PAGES))
def test_it_shows_rubrics_to_researchers_and_admins(who, people, client_for):
    end2end = rubric("end2end")
    client = client_for(people[who])
    assert client.get(reverse("judge:rubric_list")).status_code == RUBRIC_PAGES[who]
    response = client.get(reverse("judge:rubric_detail", args=[end2end.code]))
    assert response.status_code == RUBRIC_PAGES[who]
    if response.status_code == 200:
        assert b"A genuinely new perspective" in response.content


@pytest.mark.parametrize("who", ["owner", "reviewer", "anonymous"])
def test_it_lets_only_admins_add_a_rubric_version(who, people, client_for):
    rubric("idea")
    url = reverse("judge:rubric_new_version", args=["idea"])
    expected = 302 if who == "anonymous" else 403
    assert client_for(people[who]).get(url).status_code == expected
    assert client_for(people[who]).post(url, {"name": "x"}).status_code == expected
    assert Rubric.objects.filter(stage="idea").count() == 1


def test_it_adds_a_rubric_version_from_the_copied_dimensions(admin_user, client_for):
    old = rubric("idea")
    client = client_for(admin_user)
    page = client.get(reverse("judge:rubric_new_version", args=["idea"]))
    assert page.status_code == 200 and "feasibility" in page.context["form"].initial["dimensions"]
    dims = json.loads(page.context["form"].initial["dimensions"])
    dims[0]["questions"] = ["Does it answer the call?"]
    response = client.post(
        reverse("judge:rubric_new_version", args=["idea"]),
        {"name": "Idea v2", "instructions": "Judge the idea.", "dimensions": json.dumps(dims)},
    )
    new = Rubric.objects.get(stage="idea", version=2)
    assert response["Location"] == reverse("judge:rubric_detail", args=[new.code])
    assert new.dimensions[0]["questions"] == ["Does it answer the call?"] and new.created_by == admin_user
    old.refresh_from_db()
    assert old.dimensions[0]["questions"] != ["Does it answer the call?"]


@pytest.mark.parametrize(
    ("dimensions", "message"),
    [
        ("[{", "invalid JSON at line 1, column 3"),
        ('[{"key": "a", "name": "A", "questions": ["q"], "min": 1, "max": 10, "anchors": {"9-10": "x"}}]', "anchors missing for band(s)"),
    ],
)  # fmt: skip
def test_it_rejects_an_invalid_rubric_version(dimensions, message, admin_user, client_for):
    rubric("idea")
    response = client_for(admin_user).post(
        reverse("judge:rubric_new_version", args=["idea"]), {"name": "x", "instructions": "y", "dimensions": dimensions}
    )
    assert response.status_code == 400 and message in response.content.decode()
    assert Rubric.objects.filter(stage="idea").count() == 1


def test_it_answers_404_for_an_unknown_rubric_stage(admin_user, client_for):
    assert client_for(admin_user).get(reverse("judge:rubric_new_version", args=["poetry"])).status_code == 404


def test_it_hides_judge_output_from_a_reviewer_even_when_they_also_research(reviewer, client_for):
    from django.contrib.auth.models import Group

    Group.objects.get_or_create(name="researcher")[0].user_set.add(reviewer)
    paper = make_artifact(make_research_run(owner=reviewer), "paper", "# Own paper")
    make_judgment(paper, rubric("end2end"), CLAUDE, {"novelty": 8})
    response = client_for(reviewer).get(reverse("judge:artifact_judgments", args=[paper.code]))
    assert response.status_code == 403
