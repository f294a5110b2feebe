"""The research launch form: an offline-capable default, the provider checked before launch, readable
task labels; a failed experiment stage keeps the agent run and log that explain it."""

# ruff: noqa: F811  (pytest fixtures imported from other test modules are redefined as arguments)
from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.urls import reverse

from benchmark.models import ResearchRun, Run
from benchmark.research.services import research_execute, research_launch
from tests.benchmark.research.test_pages import _task, media, task  # noqa: F401  (fixtures)

NEW = reverse("benchmark:research_new")


def end2end(fake_llm, task, **extra):
    return {
        "task": task.pk,
        "backbone": f"{fake_llm.endpoints['openai'].code}/gpt-4.1",
        "mode": "end2end",
        "temperature": 0,
        **extra,
    }


def test_it_proposes_the_offline_corpus_unless_the_server_has_a_key_or_a_choice(client_for, researcher, settings, db):
    settings.LITERATURE_PROVIDER, settings.SEMANTIC_SCHOLAR_API_KEY = "", ""
    client = client_for(researcher)
    assert client.get(NEW).context["form"]["literature_provider"].initial == "corpus"
    settings.SEMANTIC_SCHOLAR_API_KEY = "s2-key"
    assert client.get(NEW).context["form"]["literature_provider"].initial == "semantic_scholar"
    settings.LITERATURE_PROVIDER = "openai_search"
    assert client.get(NEW).context["form"]["literature_provider"].initial == "openai_search"


def test_it_labels_tasks_by_title_and_id_and_marks_stage_fields_for_their_mode(client_for, researcher, task):
    _task("iclr2025_bi_align", title="Bidirectional Human-AI Alignment")
    page = client_for(researcher).get(NEW).content.decode()
    assert ">Bidirectional Human-AI Alignment · iclr2025_bi_align</option>" in page
    assert 'id="task-search"' in page and "js/research_new.js" in page
    assert 'data-field="given_idea" data-shown-when="mode=stepwise"' in page
    assert 'data-field="corpus" data-shown-when="literature_provider=corpus"' in page
    assert '<button type="submit" class="primary">Launch</button>' in page


def test_it_launches_nothing_when_semantic_scholar_cannot_be_reached(client_for, researcher, task, media, fake_llm):
    fake_llm.error(503, {"message": "offline"})  # the check's one search
    response = client_for(researcher).post(NEW, end2end(fake_llm, task, literature_provider="semantic_scholar"))
    page = response.content.decode()
    assert response.status_code == 200 and "literature provider failed its check, so nothing was launched" in page
    assert "Semantic Scholar answered HTTP 503" in page and "offline corpus" in page
    assert not ResearchRun.objects.exists()


def test_it_checks_an_uploaded_corpus_before_launch(client_for, researcher, task, media, fake_llm):
    client = client_for(researcher)
    bad = SimpleUploadedFile("refs.jsonl", b'{"abstract": "no title"}\nnot json\n')
    page = client.post(NEW, end2end(fake_llm, task, literature_provider="corpus", corpus=bad)).content.decode()
    assert "refs.jsonl line 1: no title" in page and "refs.jsonl line 2: invalid JSON" in page
    assert not ResearchRun.objects.exists()
    good = SimpleUploadedFile("refs.jsonl", b'{"title": "Probing", "abstract": "a", "year": 2024}\n')
    response = client.post(NEW, end2end(fake_llm, task, literature_provider="corpus", corpus=good))
    run = ResearchRun.objects.get()
    assert response.status_code == 302 and run.settings["literature_provider"] == "corpus"
    assert run.settings["literature_corpus"].endswith(".jsonl")


def test_it_uses_the_servers_corpus_when_none_is_uploaded(
    client_for, researcher, task, media, fake_llm, settings, tmp_path
):
    settings.LITERATURE_CORPUS = str(tmp_path / "missing.jsonl")
    client = client_for(researcher)
    page = client.post(NEW, end2end(fake_llm, task, literature_provider="corpus")).content.decode()
    assert "missing.jsonl not found" in page and not ResearchRun.objects.exists()
    (tmp_path / "missing.jsonl").write_text('{"title": "Probing"}\n')
    assert client.post(NEW, end2end(fake_llm, task, literature_provider="corpus")).status_code == 302
    assert ResearchRun.objects.get().settings["literature_corpus"] == settings.LITERATURE_CORPUS


def test_it_keeps_the_agent_run_and_log_of_a_failed_experiment_on_its_page(
    client_for,
    researcher,
    other_researcher,
    task,
    media,
    settings,
):
    settings.RESEARCH_EXPERIMENT_AGENT = "tests.benchmark.research_agents.agent_that_fails_after_working"
    with transaction.atomic():
        run = research_launch(
            owner=researcher, task=task, backbone="anthropic:claude-sonnet-4-5", stages=["experiment"],
            given={"idea": "# Idea", "literature": "Lit", "proposal": "# Proposal"},
        )  # fmt: skip
    research_execute(research_run_id=run.pk)
    run.refresh_from_db()
    experiment = run.artifacts.get(stage="experiment")
    assert run.status == ResearchRun.Status.FAILED and experiment.status == "failed"
    assert "ran out of budget" in experiment.error
    agent_run = experiment.experiment_run
    assert agent_run is not None and agent_run.params["research_run"] == str(run.code)
    page = client_for(researcher).get(reverse("benchmark:research_run", args=[run.code])).content.decode()
    assert reverse("benchmark:run_detail", args=[agent_run.code]) in page and "The coding agent's trajectory" in page
    log_url = reverse("benchmark:research_file", kwargs={"code": experiment.code, "path": "log.txt"})
    assert log_url in page
    assert b"CUDA not available" in b"".join(client_for(researcher).get(log_url).streaming_content)
    assert client_for(other_researcher).get(log_url).status_code == 404
    # The failed experiment is not a method of the MLGym leaderboard.
    assert Run.objects.filter(pk=agent_run.pk).exists()
    board = client_for(researcher).get(reverse("benchmark:leaderboard")).content.decode()
    assert "test coding agent" not in board.split('id="aup-table"')[-1].split("</table>")[0]
