"""The MLR-Agent pipeline with model replies faked at the HTTP transport (the real SDKs run)."""

from __future__ import annotations

import base64
import json
import sys

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings
from django.db import transaction

from benchmark.models import Artifact, ResearchRun, Task
from benchmark.research import literature
from benchmark.research.files import read_text
from benchmark.research.services import research_execute, research_launch, research_resume
from tests.benchmark.mlrbench_data import needs_data

MODEL = "anthropic:claude-sonnet-4-5"
IDEA = (
    "# Sparse Probes for Code Agents\n\n## Motivation\nAgents fail silently.\n\n## Main Idea\nProbe the hidden states."
)
LIT_REVIEW = "Probing work [1] shows linear structure; agents [2] lack it."
PROPOSAL = "# Proposal\n\nWe minimise $\\mathcal{L} = \\sum_i \\ell(f(x_i), y_i)$ against two baselines."
PAPER = "# Sparse Probes\n\n## Results\n\n![Message flow](figures/message_flow.png)\n\n![Ghost](figures/ghost.png)"


@pytest.fixture
def task(db):
    return Task.objects.create(
        slug="iclr2025_probe", version_hash="x" * 64, kind=Task.Kind.MLR, title="Workshop on Probes",
        description="# Workshop on Probes\n\nPapers on probing code agents.", venue="ICLR", year=2025, source="mlrbench",
    )  # fmt: skip


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.jsonl"
    rows = [
        {"title": "Linear probes of hidden states", "abstract": "Probe hidden states of models.", "url": "https://example.org/1", "year": 2023},
        {"title": "Code agents in the wild", "abstract": "Agents for code fail silently; sparse probes help.", "url": "https://example.org/2", "year": 2024},
        {"title": "Protein folding", "abstract": "Unrelated biology.", "url": "https://example.org/3", "year": 2022},
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in rows) + '\nnot json\n{"abstract": "no title"}\n')
    return path


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.LLM_MAX_RETRIES = 0
    return settings.MEDIA_ROOT


def _launch(owner, task, corpus, **kwargs):
    with transaction.atomic():
        return research_launch(
            owner=owner,
            task=task,
            backbone=MODEL,
            settings={"literature_provider": "corpus", "literature_corpus": str(corpus)},
            **kwargs,
        )


def _queue_first_three(fake_llm):
    fake_llm.anthropic(IDEA, 500, 80).anthropic(LIT_REVIEW, 900, 120).anthropic(PROPOSAL, 1500, 2500)


@pytest.mark.django_db
def test_it_runs_idea_literature_proposal_then_fails_the_experiment_honestly_and_resumes(
    fake_llm, researcher, task, corpus, media, settings, monkeypatch
):
    settings.RESEARCH_EXPERIMENT_AGENT = ""  # the default: Referee's agent (benchmark.research.agent)
    monkeypatch.setitem(sys.modules, "benchmark.agent.loop", None)  # as on a deployment without the agent
    _queue_first_three(fake_llm)
    run = _launch(researcher, task, corpus)
    research_execute(research_run_id=run.pk)
    run.refresh_from_db()
    stages = {a.stage: a for a in run.artifacts.all()}
    assert [stages[s].status for s in ("idea", "literature", "proposal", "experiment")] == ["done"] * 3 + ["failed"]
    assert "paper" not in stages  # never started after the failure
    assert run.status == ResearchRun.Status.FAILED and run.error.startswith("Experiment failed:")
    assert "no experiment was run and no results exist" in stages["experiment"].error
    assert stages["idea"].content == IDEA and stages["idea"].data["words"] <= 200
    assert stages["idea"].data["missing_parts"] == []
    # Literature: the offline corpus ranked by the idea's title; the unrelated paper left out; links kept.
    refs = stages["literature"].data["references"]
    assert [r["url"] for r in refs] == ["https://example.org/2", "https://example.org/1"]
    assert "[Code agents in the wild](https://example.org/2)" in stages["literature"].content
    # The proposal prompt carried the idea and the review.
    proposal_prompt = fake_llm.calls[2]["body"]["messages"][0]["content"]
    assert IDEA in proposal_prompt and LIT_REVIEW in proposal_prompt
    assert fake_llm.calls[0]["body"]["temperature"] == 0.0
    # Tokens and cost per stage and in total (claude-sonnet-4-5 list price: 3 / 15 USD per Mtok).
    assert (stages["idea"].tokens_sent, stages["idea"].tokens_received) == (500, 80)
    assert stages["idea"].cost == pytest.approx((500 * 3 + 80 * 15) / 1e6)
    assert (run.tokens_sent, run.tokens_received) == (2900, 2700)
    assert run.cost == pytest.approx(sum(a.cost for a in stages.values()))

    # Resume: continues at the experiment; the three done stages make no new model call.
    calls = len(fake_llm.calls)
    assert research_resume(run=run)
    research_execute(research_run_id=run.pk)
    assert len(fake_llm.calls) == calls
    assert run.artifacts.get(stage="idea").pk == stages["idea"].pk


@needs_data
@pytest.mark.django_db
def test_it_finishes_the_paper_after_resuming_and_shows_the_figures_to_the_writing_model(
    fake_llm, researcher, task, corpus, media, settings
):
    settings.RESEARCH_EXPERIMENT_AGENT = "tests.benchmark.research_agents.failing_agent"
    _queue_first_three(fake_llm)
    run = _launch(researcher, task, corpus)
    research_execute(research_run_id=run.pk)
    run.refresh_from_db()
    assert run.artifacts.get(stage="experiment").error == "the experiment agent failed: the sandbox ran out of disk"

    settings.RESEARCH_EXPERIMENT_AGENT = "tests.benchmark.research_agents.released_agent"
    fake_llm.anthropic(PAPER, 20_000, 3000)
    research_resume(run=run)
    research_execute(research_run_id=run.pk)
    run.refresh_from_db()
    assert run.status == ResearchRun.Status.FINISHED and run.error == ""
    experiment = run.artifacts.get(stage="experiment")
    assert experiment.cost == 0.25 and "figures/message_flow.png" in experiment.files
    assert read_text(experiment.code, "results.md").startswith(experiment.content[:50])
    paper = run.artifacts.get(stage="paper")
    assert paper.files == ["figures/message_flow.png"]
    assert paper.data["missing_figures"] == ["figures/ghost.png"]  # cited, never produced: shown, not hidden
    # The writing model saw the figures as images, each named.
    content = fake_llm.calls[-1]["body"]["messages"][0]["content"]
    images = [block for block in content if block["type"] == "image"]
    assert len(images) == 2 and images[0]["source"]["media_type"] == "image/png"
    assert base64.b64decode(images[0]["source"]["data"]).startswith(b"\x89PNG")
    assert any("Figure file: figures/message_flow.png" == b.get("text") for b in content)
    assert run.cost == pytest.approx(sum(a.cost for a in run.artifacts.all()))


@pytest.mark.django_db
def test_it_runs_one_stage_from_given_inputs(fake_llm, researcher, task, corpus, media):
    fake_llm.anthropic(PROPOSAL, 10, 20)
    with pytest.raises(ValueError, match="needs the output of: literature"):
        _launch(researcher, task, corpus, stages=["proposal"], given={"idea": IDEA})
    run = _launch(researcher, task, corpus, stages=["proposal"], given={"idea": IDEA, "literature": LIT_REVIEW})
    assert run.mode == ResearchRun.Mode.STEPWISE
    research_execute(research_run_id=run.pk)
    run.refresh_from_db()
    assert run.status == ResearchRun.Status.FINISHED
    assert list(run.artifacts.order_by("created_at").values_list("stage", "status")) == [
        ("idea", "done"), ("literature", "done"), ("proposal", "done"),
    ]  # fmt: skip
    assert run.artifacts.get(stage="idea").data == {"given": True}
    assert (run.tokens_sent, run.tokens_received) == (10, 20)  # given stages cost nothing
    assert len(fake_llm.calls) == 1


@pytest.mark.django_db
def test_it_asks_once_to_shorten_an_idea_over_200_words(fake_llm, researcher, task, corpus, media):
    fake_llm.anthropic("# T\n\n## Motivation\n" + "word " * 250 + "\n## Main Idea\nx", 100, 300)
    fake_llm.anthropic(IDEA, 120, 60)
    run = _launch(researcher, task, corpus, stages=["idea"])
    research_execute(research_run_id=run.pk)
    idea = run.artifacts.get(stage="idea")
    assert idea.content == IDEA and not idea.data["over_limit"]
    assert (idea.tokens_sent, idea.tokens_received) == (220, 360)
    assert "rewrite it in at most 200 words" in fake_llm.calls[1]["body"]["messages"][0]["content"]


@pytest.mark.django_db
def test_it_records_a_provider_error_as_a_failed_stage(fake_llm, researcher, task, corpus, media):
    fake_llm.error(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad model"}})
    run = _launch(researcher, task, corpus, stages=["idea"])
    research_execute(research_run_id=run.pk)
    run.refresh_from_db()
    idea = run.artifacts.get(stage="idea")
    assert idea.status == Artifact.Status.FAILED and "bad model" in idea.error
    assert run.status == ResearchRun.Status.FAILED and run.cost == 0


def test_it_searches_semantic_scholar_and_the_openai_search_model_through_the_transport(fake_llm):
    fake_llm.replies.append(
        (
            200,
            {
                "data": [
                    {"title": "A", "abstract": "a", "url": "https://s2/1", "year": 2024, "authors": [{"name": "X"}]},
                    {"title": ""},
                ]
            },
        )
    )
    found = literature.search("probes", provider="semantic_scholar")
    assert [r.as_dict() for r in found.references] == [
        {"title": "A", "abstract": "a", "url": "https://s2/1", "year": "2024", "authors": "X"}
    ]
    assert fake_llm.calls[0]["url"].startswith(literature.S2_URL + "?query=probes")
    fake_llm.error(429, {"message": "rate limited"})
    with pytest.raises(literature.LiteratureError, match="HTTP 429"):
        literature.search("probes", provider="semantic_scholar")
    fake_llm.openai('Here: ```json\n[{"title": "B", "url": "javascript:alert(1)", "year": 2023}]\n```', 50, 40)
    found = literature.search("probes", provider="openai_search")
    assert found.references[0].title == "B" and found.references[0].url == ""  # unsafe link dropped
    assert (found.tokens_in, found.tokens_out) == (50, 40)
    assert fake_llm.calls[-1]["body"]["model"] == "gpt-4o-search-preview"


def test_it_names_the_bad_lines_of_a_corpus_file(corpus):
    refs, problems = literature.load_corpus(corpus)
    assert len(refs) == 3
    assert (
        problems[0].startswith("corpus.jsonl line 4: invalid JSON") and problems[1] == "corpus.jsonl line 5: no title"
    )


@pytest.mark.django_db(transaction=True)
def test_it_enqueues_after_commit_and_a_worker_runs_the_pipeline(
    fake_llm, researcher, task, corpus, media, redis_client
):
    import django_rq
    from rq import SimpleWorker

    queue = django_rq.get_queue("runs")
    queue.empty()
    fake_llm.anthropic(IDEA, 1, 1)
    run = _launch(researcher, task, corpus, stages=["idea"])
    assert queue.count == 1
    SimpleWorker([queue], connection=queue.connection).work(burst=True)
    run.refresh_from_db()
    assert run.status == ResearchRun.Status.FINISHED and run.artifacts.get().content == IDEA


async def _communicator(path, cookie=None):
    from config.asgi import application

    headers = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]
    if cookie:
        headers.append((b"cookie", cookie.encode()))
    return WebsocketCommunicator(application, path, headers=headers)


async def _login_cookie(user) -> str:
    from django.test import Client

    client = Client()
    await sync_to_async(client.force_login)(user)
    return f"{django_settings.SESSION_COOKIE_NAME}={client.cookies[django_settings.SESSION_COOKIE_NAME].value}"


@pytest.mark.django_db(transaction=True)
async def test_it_streams_each_stage_as_it_finishes_over_the_websocket(
    fake_llm, researcher, other_researcher, task, corpus, media, redis_client
):
    fake_llm.replies.clear()
    fake_llm.anthropic(PROPOSAL, 7, 7)
    run = await sync_to_async(_launch)(
        researcher, task, corpus, stages=["proposal"], given={"idea": IDEA, "literature": LIT_REVIEW}
    )
    communicator = await _communicator(f"/ws/research/{run.code}/", await _login_cookie(researcher))
    connected, _ = await communicator.connect()
    assert connected
    snapshot = await communicator.receive_json_from(timeout=5)
    assert snapshot["type"] == "snapshot" and snapshot["run"]["status"] == "queued"
    assert [(s["stage"], s["status"], s["given"]) for s in snapshot["run"]["stages"]] == [
        ("idea", "done", True), ("literature", "done", True), ("proposal", "pending", False),
    ]  # fmt: skip

    await sync_to_async(research_execute)(research_run_id=run.pk)
    seen = []
    while True:
        message = await communicator.receive_json_from(timeout=5)
        assert message["type"] == "update"
        seen.append((message["run"]["status"], message["run"]["stages"][-1]["status"]))
        if message["run"]["finished"]:
            break
    assert ("running", "running") in seen and ("running", "done") in seen
    assert seen[-1] == ("finished", "done")
    assert message["run"]["tokens_sent"] == 7
    await communicator.disconnect()

    # Another researcher, and an anonymous visitor, are refused; so is an unknown code.
    for cookie, path in (
        (await _login_cookie(other_researcher), f"/ws/research/{run.code}/"),
        (None, f"/ws/research/{run.code}/"),
        (await _login_cookie(researcher), "/ws/research/00000000-0000-0000-0000-000000000000/"),
    ):
        refused = await _communicator(path, cookie)
        connected, _ = await refused.connect()
        assert not connected
        await refused.disconnect()
