"""Research pages: task browser, launch form, run timeline, paper, files; the permission checklist."""

from __future__ import annotations

import re
import uuid

import pytest
from django.urls import reverse

from benchmark.models import Artifact, ResearchRun, Task
from benchmark.research.files import file_store

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
MISSING = uuid.UUID("00000000-0000-0000-0000-000000000000")


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def _task(slug: str, *, venue: str = "ICLR", year: int | None = 2025, category: str = "", title: str = "") -> Task:
    return Task.objects.create(
        slug=slug, version_hash=slug.ljust(64, "0")[:64], kind=Task.Kind.MLR, title=title or f"Workshop {slug}",
        description=f"# Workshop {slug}\n\nText about {slug}.", venue=venue, year=year, category=category,
        source="mlrbench", config={"faults": [], "attribution": "MLR-Bench, MIT License", "workshop": {}},
    )  # fmt: skip


@pytest.fixture
def task(db):
    return _task("iclr2025_probe")


@pytest.fixture
def run(researcher, task, media):
    run = ResearchRun.objects.create(
        task=task, owner=researcher, backbone="anthropic:claude-sonnet-4-5", stages=["idea", "experiment", "paper"],
        status=ResearchRun.Status.FAILED, error="Experiment failed: no agent", cost=0.5,
    )  # fmt: skip
    Artifact.objects.create(research_run=run, stage="idea", content="# Idea\n\nUse $x_i^2$.", tokens_sent=5)
    experiment = Artifact.objects.create(research_run=run, stage="experiment", content="results")
    experiment.files = [file_store(artifact=experiment, relative="figures/a.png", data=PNG)]
    experiment.save()
    paper = Artifact.objects.create(
        research_run=run, stage="paper", content="# Paper\n\n$$E=mc^2$$\n\n![A](figures/a.png)"
    )
    paper.files = [file_store(artifact=paper, relative="figures/a.png", data=PNG)]
    paper.data = {"figure_map": {"figures/a.png": "figures/a.png"}}
    paper.save()
    return run


@pytest.fixture
def released(task, media):
    run = ResearchRun.objects.create(
        task=task, source=ResearchRun.Source.MLRBENCH, backbone="claude", status=ResearchRun.Status.FINISHED,
        settings={"model": "claude-3-7-sonnet-20250219"},
    )  # fmt: skip
    Artifact.objects.create(research_run=run, stage="paper", content="# Released paper")
    return run


def test_it_browses_mlr_tasks_with_search_and_filters(client_for, researcher):
    _task("iclr2025_probe", category="LLM/VLM")
    _task("neurips2024_touch", venue="NeurIPS", year=2024, title="Touch Processing")
    _task("icml2023_old", venue="ICML", year=2023)
    client = client_for(researcher)
    url = reverse("benchmark:research_tasks")
    assert client.get(url).context["page"].paginator.count == 3
    assert [t.slug for t in client.get(url, {"q": "touch"}).context["page"]] == ["neurips2024_touch"]
    assert [t.slug for t in client.get(url, {"venue": "ICML"}).context["page"]] == ["icml2023_old"]
    assert [t.slug for t in client.get(url, {"year": "2025"}).context["page"]] == ["iclr2025_probe"]
    assert [t.slug for t in client.get(url, {"category": "LLM/VLM"}).context["page"]] == ["iclr2025_probe"]
    assert client.get(url, {"category": "none"}).context["page"].paginator.count == 2
    page = client.get(url).content.decode()
    assert "MIT License" in page and "Touch Processing" in page


def test_it_lists_tasks_that_have_no_year_among_those_that_do(client_for, researcher):
    _task("iclr2025_probe")
    _task("workshop_undated", year=None)  # a task imported without a year once broke the page (500)
    response = client_for(researcher).get(reverse("benchmark:research_tasks"))
    assert response.status_code == 200 and response.context["years"] == [2025]
    assert response.context["page"].paginator.count == 2


def test_it_shows_a_task_with_its_faults_and_lets_only_admins_set_its_category(
    client_for, researcher, admin_user, reviewer, task
):
    task.config["faults"] = [{"kind": "swapped_body", "other": "x", "detail": "bodies swapped with x"}]
    task.save()
    url = reverse("benchmark:research_task", args=[task.code])
    page = client_for(researcher).get(url).content.decode()
    assert "Known data faults" in page and "bodies swapped with x" in page and "Set category" not in page
    assert "Set category" in client_for(admin_user).get(url).content.decode()
    assert client_for(reviewer).get(url).status_code == 403
    assert client_for(researcher).get(reverse("benchmark:research_task", args=[MISSING])).status_code == 404

    post = reverse("benchmark:research_task_category", args=[task.code])
    assert client_for(researcher).post(post, {"category": "ML Theory"}).status_code == 403
    assert client_for(admin_user).get(post).status_code == 405
    assert client_for(admin_user).post(post, {"category": "Astrology"}).status_code == 302
    task.refresh_from_db()
    assert task.category == ""
    client_for(admin_user).post(post, {"category": "ML Theory"})
    task.refresh_from_db()
    assert task.category == "ML Theory"


def test_it_launches_a_stepwise_run_from_the_form(client_for, researcher, task, media, fake_llm):
    client = client_for(researcher)
    url = reverse("benchmark:research_new")
    gpt = f"{fake_llm.endpoints['openai'].code}/gpt-4.1"
    assert client.get(url, {"task": str(task.code)}).context["form"].initial["task"] == task.pk
    bad = client.post(
        url,
        {
            "task": task.pk,
            "backbone": "openai:gpt4",
            "mode": "end2end",
            "literature_provider": "corpus",
            "temperature": 0,
        },
    )
    assert bad.status_code == 200 and "Select a valid choice" in bad.content.decode()
    missing = client.post(
        url,
        {"task": task.pk, "backbone": gpt, "mode": "stepwise", "stage": "proposal",
         "literature_provider": "semantic_scholar", "temperature": 0, "given_idea": "# I"},
    )  # fmt: skip
    assert "needs the output of: literature" in missing.content.decode()
    assert fake_llm.checks == []  # the inputs are checked before the endpoint is called
    response = client.post(
        url,
        {"task": task.pk, "backbone": gpt, "mode": "stepwise", "stage": "proposal",
         "literature_provider": "semantic_scholar", "temperature": 0, "given_idea": "# I", "given_literature": "L"},
    )  # fmt: skip
    run = ResearchRun.objects.get(owner=researcher)
    assert response.status_code == 302 and response.url == reverse("benchmark:research_run", args=[run.code])
    assert run.stages == ["proposal"] and run.mode == "stepwise"
    assert (run.backbone, run.endpoint) == ("openai:gpt-4.1", fake_llm.endpoints["openai"])
    assert set(run.artifacts.values_list("stage", flat=True)) == {"idea", "literature"}
    assert [c["body"]["model"] for c in fake_llm.checks] == ["gpt-4.1"]  # one check call before the launch


def test_it_launches_nothing_when_the_backbone_fails_its_check(client_for, researcher, task, media, fake_llm):
    fake_llm.check_error(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}})
    response = client_for(researcher).post(
        reverse("benchmark:research_new"),
        {"task": task.pk, "backbone": f"{fake_llm.endpoints['openai'].code}/gpt-4.1", "mode": "end2end",
         "literature_provider": "semantic_scholar", "temperature": 0},
    )  # fmt: skip
    page = response.content.decode()
    assert response.status_code == 200 and "nothing was launched" in page
    assert "https://api.openai.com/v1" in page and "HTTP 401" in page and "Incorrect API key provided" in page
    assert not ResearchRun.objects.exists()


def test_it_guards_the_launch_form(client_for, reviewer):
    url = reverse("benchmark:research_new")
    assert client_for(reviewer).get(url).status_code == 403
    assert client_for(None).get(url).status_code == 302
    assert client_for(reviewer).put(url).status_code == 405


def test_it_shows_the_run_page_to_its_owner_and_admins_only(
    client_for, researcher, other_researcher, admin_user, reviewer, run
):
    url = reverse("benchmark:research_run", args=[run.code])
    response = client_for(researcher).get(url)
    page = response.content.decode()
    assert response.status_code == 200
    assert [s["stage"] for s in response.context["timeline"]] == ["idea", "experiment", "paper"]
    assert "Experiment failed: no agent" in page and "Resume from the first stage not done" in page
    assert '<span class="math">$x_i^2$</span>' in page and "vendor/katex/katex.min.js" in page
    assert "js/research_run.js" in page and str(run.code) in page
    assert client_for(admin_user).get(url).status_code == 200
    assert client_for(other_researcher).get(url).status_code == 404
    assert client_for(reviewer).get(url).status_code == 403
    assert client_for(None).get(url).status_code == 302
    assert client_for(researcher).get(reverse("benchmark:research_run", args=[MISSING])).status_code == 404
    assert client_for(researcher).post(url).status_code == 405


def test_it_lets_researchers_read_released_runs_but_not_resume_them(client_for, other_researcher, reviewer, released):
    url = reverse("benchmark:research_run", args=[released.code])
    page = client_for(other_researcher).get(url).content.decode()
    assert "claude-3-7-sonnet-20250219" in page and "MIT License" in page and "Resume" not in page
    assert client_for(reviewer).get(url).status_code == 403
    resume = reverse("benchmark:research_resume", args=[released.code])
    assert client_for(other_researcher).post(resume).status_code == 403


def test_it_resumes_only_for_the_owner(
    client_for, researcher, other_researcher, run, django_capture_on_commit_callbacks
):
    url = reverse("benchmark:research_resume", args=[run.code])
    assert client_for(other_researcher).post(url).status_code == 404
    assert client_for(researcher).get(url).status_code == 405
    assert client_for(None).post(url).status_code == 302
    assert client_for(researcher).post(reverse("benchmark:research_resume", args=[MISSING])).status_code == 404
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert client_for(researcher).post(url).status_code == 302
    run.refresh_from_db()
    assert run.status == ResearchRun.Status.QUEUED and len(callbacks) == 1


def test_it_renders_the_paper_with_figures_and_math_and_serves_figures_to_permitted_users(
    client_for, researcher, other_researcher, admin_user, reviewer, run
):
    url = reverse("benchmark:research_paper", args=[run.code])
    page = client_for(researcher).get(url).content.decode()
    paper = run.artifacts.get(stage="paper")
    figure = reverse("benchmark:research_file", args=[paper.code, "figures/a.png"])
    assert f'<img src="{figure}" alt="A" loading="lazy">' in page
    assert '<span class="math">$$E=mc^2$$</span>' in page
    assert client_for(other_researcher).get(url).status_code == 404
    assert client_for(reviewer).get(url).status_code == 403
    assert client_for(None).get(url).status_code == 302
    assert client_for(researcher).get(reverse("benchmark:research_paper", args=[MISSING])).status_code == 404
    assert client_for(researcher).post(url).status_code == 405

    response = client_for(researcher).get(figure)
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content) == PNG and "sandbox" in response["Content-Security-Policy"]
    assert client_for(admin_user).get(figure).status_code == 200
    assert client_for(other_researcher).get(figure).status_code == 404
    assert client_for(reviewer).get(figure).status_code == 403
    assert client_for(None).get(figure).status_code == 302
    assert client_for(researcher).post(figure).status_code == 405
    assert (
        client_for(researcher).get(reverse("benchmark:research_file", args=[MISSING, "figures/a.png"])).status_code
        == 404
    )
    for sneaky in ("figures/../../../secret_key", "figures/b.png", "/etc/passwd"):
        assert (
            client_for(researcher).get(reverse("benchmark:research_file", args=[paper.code, sneaky])).status_code == 404
        )


def test_it_lists_own_and_released_runs_on_the_research_home(
    client_for, researcher, other_researcher, reviewer, run, released
):
    url = reverse("benchmark:research_home")
    response = client_for(other_researcher).get(url)
    assert response.context["mine"] == [] and response.context["released"] == [released]
    assert client_for(researcher).get(url).context["mine"] == [run]
    assert client_for(reviewer).get(url).status_code == 403
    assert client_for(None).get(url).status_code == 302
    assert client_for(researcher).post(url).status_code == 405


def test_it_shows_an_ai_scientist_pdf_paper_as_its_file_and_serves_it_to_permitted_users(
    client_for, researcher, reviewer, task, media
):
    run = ResearchRun.objects.create(
        task=task, source=ResearchRun.Source.AI_SCIENTIST, backbone="o4-mini", status=ResearchRun.Status.FINISHED,
        settings={"system": "AI Scientist v2", "model": "o4-mini"},
    )  # fmt: skip
    paper = Artifact.objects.create(research_run=run, stage="paper", content="")
    paper.files = [file_store(artifact=paper, relative="iclr2025_probe.pdf", data=b"%PDF-1.4\n")]
    paper.data = {"pdf": "iclr2025_probe.pdf", "text_extracted": False, "note": "its text is not extracted"}
    paper.save()
    page = client_for(researcher).get(reverse("benchmark:research_paper", args=[run.code])).content.decode()
    pdf = reverse("benchmark:research_file", args=[paper.code, "iclr2025_probe.pdf"])
    assert f'href="{pdf}"' in page and "its text is not extracted" in page
    response = client_for(researcher).get(pdf)
    assert response["Content-Type"] == "application/pdf" and b"".join(response.streaming_content) == b"%PDF-1.4\n"
    assert client_for(reviewer).get(pdf).status_code == 403
    assert client_for(None).get(pdf).status_code == 302
    home = client_for(researcher).get(reverse("benchmark:research_home"))
    assert home.context["released"] == [run] and "AI Scientist v2 · o4-mini" in home.content.decode()


def _page(response) -> str:
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", response.content.decode())


def test_it_answers_another_researchers_run_as_it_answers_a_missing_code(
    client_for, researcher, other_researcher, admin_user, reviewer, run
):
    """Agent run pages answer 404 for runs one may not see (benchmark.runs.views._run_for); research
    pages do the same, so a 403 never confirms that a code is someone's run."""
    paper = run.artifacts.get(stage="paper")
    other = client_for(other_researcher)
    pages = {
        reverse("benchmark:research_run", args=[run.code]): reverse("benchmark:research_run", args=[MISSING]),
        reverse("benchmark:research_paper", args=[run.code]): reverse("benchmark:research_paper", args=[MISSING]),
        reverse("benchmark:research_file", args=[paper.code, "figures/a.png"]): reverse(
            "benchmark:research_file", args=[MISSING, "figures/a.png"]
        ),
    }
    for url, missing in pages.items():
        seen, unknown = other.get(url), other.get(missing)
        assert (seen.status_code, _page(seen)) == (404, _page(unknown)) and unknown.status_code == 404
        assert client_for(researcher).get(url).status_code == 200  # the owner
        assert client_for(admin_user).get(url).status_code == 200
        assert client_for(reviewer).get(url).status_code == 403  # reviewers see no run, known or not
        assert client_for(None).get(url).status_code == 302
        assert client_for(researcher).post(url).status_code == 405
    resume = reverse("benchmark:research_resume", args=[run.code])
    assert other.post(resume).status_code == 404 == other.post(f"/research/{MISSING}/resume/").status_code
    run.refresh_from_db()
    assert run.status == ResearchRun.Status.FAILED  # nothing resumed
