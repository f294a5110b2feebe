"""Requesting, running, retrying and aggregating judgments; providers faked at the HTTP transport."""

import json

import django_rq
import pytest
from django.core.exceptions import ValidationError
from rq import SimpleWorker

from judge.aggregate import judgment_panels
from judge.models import Judgment
from judge.services import judgment_execute, judgment_request
from tests.judge.factories import make_artifact, make_judgment, make_research_run, rubric, valid_reply

pytestmark = pytest.mark.django_db

CLAUDE = "anthropic:claude-sonnet-4-5"
GPT = "openai:gpt-4o"


@pytest.fixture
def paper(db):
    return make_artifact(make_research_run(), "paper", "# Paper\n\nResults: 0.91.")


def _queued(paper, model=CLAUDE, stage="end2end"):
    return Judgment.objects.create(artifact=paper, rubric=rubric(stage), judge_model=model)


def test_it_queues_one_job_per_judge_after_commit_and_a_worker_runs_them(
    paper, researcher, fake_llm, redis_client, django_capture_on_commit_callbacks
):
    queue = django_rq.get_queue("judge")
    end2end = rubric("end2end")
    with django_capture_on_commit_callbacks(execute=True):
        judgments = judgment_request(
            artifact=paper, rubric=end2end, judge_models=[CLAUDE, GPT, CLAUDE], with_supplementary=False,
            requested_by=researcher,
        )  # fmt: skip
        assert queue.count == 0  # nothing runs before the rows are committed
    assert len(judgments) == 2 and queue.count == 2
    assert [j.status for j in judgments] == ["queued", "queued"]
    assert queue.jobs[0].func_name == "judge.jobs.run_judgment"
    fake_llm.anthropic(valid_reply(end2end, 8), tokens_in=1000, tokens_out=100)
    fake_llm.openai(valid_reply(end2end, 6), tokens_in=2000, tokens_out=200)
    SimpleWorker([queue], connection=queue.connection).work(burst=True)
    claude, gpt = (Judgment.objects.get(pk=j.pk) for j in judgments)
    assert (claude.status, gpt.status) == ("succeeded", "succeeded")
    assert claude.score_of("novelty") == 8 and gpt.score_of("novelty") == 6
    assert "api.anthropic.com" in fake_llm.calls[0]["url"] and "api.openai.com" in fake_llm.calls[1]["url"]
    assert fake_llm.calls[0]["body"]["temperature"] == 0 and fake_llm.calls[1]["body"]["temperature"] == 0
    assert (claude.tokens_sent, claude.tokens_received) == (1000, 100)
    assert claude.cost == pytest.approx(1000 * 3 / 1e6 + 100 * 15 / 1e6)
    assert gpt.cost == pytest.approx(2000 * 2.5 / 1e6 + 200 * 10 / 1e6)
    assert len(claude.prompt_hash) == 64 and claude.prompt_hash == gpt.prompt_hash
    assert claude.with_supplementary is False and claude.requested_by == researcher


def test_it_fails_a_judgment_whose_job_the_queue_did_not_take(
    paper, researcher, redis_client, monkeypatch, django_capture_on_commit_callbacks
):
    """Redis down after the commit: the judgment says so and is not left "queued" forever."""
    import redis
    from rq import Queue

    from config.redis_server import free_port

    dead = Queue("judge", connection=redis.Redis(port=free_port(), socket_connect_timeout=1))  # nothing listens
    monkeypatch.setattr(django_rq, "get_queue", lambda name="default", **kw: dead)
    with django_capture_on_commit_callbacks(execute=True):
        (judgment,) = judgment_request(
            artifact=paper, rubric=rubric("end2end"), judge_models=[CLAUDE], with_supplementary=False,
            requested_by=researcher,
        )  # fmt: skip
    judgment.refresh_from_db()
    assert judgment.status == "failed" and judgment.finished_at is not None
    assert "job queue (Redis) did not take its job (ConnectionError)" in judgment.error
    assert judgment.scores == {}


def test_it_re_asks_with_the_validation_error_and_keeps_every_attempt(paper, fake_llm):
    judgment = _queued(paper, GPT)
    end2end = judgment.rubric
    bad = valid_reply(end2end, 7, novelty=11)
    fake_llm.openai(bad, tokens_in=1000, tokens_out=100).openai(
        "```json\n" + valid_reply(end2end, 7) + "\n```", tokens_in=1500, tokens_out=120
    )
    judgment = judgment_execute(judgment=judgment)
    assert judgment.status == "succeeded" and judgment.attempts == 2
    assert (judgment.tokens_sent, judgment.tokens_received) == (2500, 220)
    assert judgment.repairs == ["removed a code fence"]
    retry = fake_llm.calls[1]["body"]["messages"]
    assert retry[-2] == {"role": "assistant", "content": bad}
    assert "novelty.score: Input should be less than or equal to 10 (got 11)" in retry[-1]["content"]
    assert [a["error"] != "" for a in judgment.attempt_log] == [True, False]


def test_it_stores_a_judgment_that_never_validates_as_failed_with_its_reply(paper, fake_llm, settings):
    settings.JUDGE_MAX_ATTEMPTS = 3
    judgment = _queued(paper, CLAUDE)
    for text in ("I'd give it a 7.", '{"novelty": {"score": 7}}', "Overall: strong paper {not json}"):
        fake_llm.anthropic(text, tokens_in=10, tokens_out=5)
    judgment = judgment_execute(judgment=judgment)
    assert judgment.status == "failed" and judgment.attempts == 3 and len(fake_llm.calls) == 3
    assert judgment.scores == {} and judgment.score_of("novelty") is None
    assert judgment.raw_reply == "Overall: strong paper {not json}"
    assert judgment.error.startswith("no valid reply after 3 attempt(s); last error: invalid JSON")
    assert judgment.tokens_sent == 30  # failed calls still cost tokens, and are accounted


def test_it_records_a_provider_failure_without_a_score(paper, fake_llm, settings):
    settings.LLM_MAX_RETRIES = 0
    fake_llm.error(500, {"type": "error", "error": {"type": "api_error", "message": "upstream exploded"}})
    judgment = judgment_execute(judgment=_queued(paper, CLAUDE))
    assert judgment.status == "failed" and judgment.scores == {}
    assert "model call failed on attempt 1" in judgment.error and "ProviderError" in judgment.error
    assert judgment.finished_at is not None


def test_it_fails_visibly_when_no_key_is_configured(paper, fake_llm, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    judgment = judgment_execute(judgment=_queued(paper, CLAUDE))
    assert judgment.status == "failed" and judgment.error == (
        "the judge's endpoint cannot be used: the key of the endpoint 'Anthropic' is not set on this server"
        " (ANTHROPIC_API_KEY)"
    )
    assert fake_llm.calls == []


def test_it_does_not_run_a_judgment_twice(paper, fake_llm):
    end2end = rubric("end2end")
    fake_llm.anthropic(valid_reply(end2end, 5))
    judgment = judgment_execute(judgment=_queued(paper, CLAUDE))
    again = judgment_execute(judgment=judgment)
    assert again.status == "succeeded" and len(fake_llm.calls) == 1


def test_it_refuses_a_rubric_that_does_not_fit_the_artifact_or_a_bad_model(paper):
    idea = make_artifact(paper.research_run, "idea", "An idea.")
    with pytest.raises(ValidationError, match="does not apply to a Idea artifact"):
        judgment_request(artifact=idea, rubric=rubric("end2end"), judge_models=[CLAUDE], with_supplementary=True)
    with pytest.raises(ValidationError, match="must read provider:model"):
        judgment_request(artifact=paper, rubric=rubric("end2end"), judge_models=["gpt-4o"], with_supplementary=True)
    with pytest.raises(ValidationError, match="at least one judge"):
        judgment_request(artifact=paper, rubric=rubric("end2end"), judge_models=[" "], with_supplementary=True)
    assert not Judgment.objects.exists()


def test_it_stores_hallucination_findings(paper, fake_llm):
    rubric("hallucination")
    reply = {
        "findings": [{"type": "incorrect_citation", "evidence": "Smith 2031 does not exist", "location": "ref 4"}],
        "integrity": {"score": 6, "justification": "one fake reference"},
    }
    fake_llm.openai(json.dumps(reply))
    judgment = judgment_execute(judgment=_queued(paper, GPT, "hallucination"))
    assert judgment.findings[0]["evidence"] == "Smith 2031 does not exist"
    assert judgment.scores == {"integrity": {"score": 6, "justification": "one fake reference"}}


def test_it_averages_succeeded_judges_with_their_spread_and_leaves_failed_ones_out(paper):
    end2end = rubric("end2end")
    make_judgment(paper, end2end, CLAUDE, {"novelty": 8, "clarity": 6, "confidence": 4})
    make_judgment(paper, end2end, GPT, {"novelty": 5, "clarity": 6, "confidence": 3})
    make_judgment(paper, end2end, "openai:o4-mini", None)  # failed: shown, never averaged
    [panel] = judgment_panels(artifact=paper)
    rows = {row.dimension["key"]: row for row in panel.rows}
    assert [j.judge_model for j in panel.judgments] == [CLAUDE, GPT, "openai:o4-mini"]
    assert (rows["novelty"].mean, rows["novelty"].low, rows["novelty"].high, rows["novelty"].n) == (6.5, 5, 8, 2)
    assert rows["novelty"].sd == pytest.approx(2.1213, abs=1e-4)
    assert rows["novelty"].spread == 3
    assert (rows["clarity"].sd, rows["clarity"].spread) == (0.0, 0)
    assert [c.score for c in rows["novelty"].cells] == [8, 5, None]
    assert rows["soundness"].mean is None and rows["soundness"].n == 0
    assert [j.status for j in panel.failed] == ["failed"] and len(panel.succeeded) == 2


def test_it_keeps_panels_apart_per_rubric_version(paper):
    from judge.rubrics import rubric_create_version

    v1 = rubric("end2end")
    v2 = rubric_create_version(stage="end2end", name="v2", instructions="x", dimensions=v1.dimensions)
    make_judgment(paper, v1, CLAUDE, {"novelty": 8})
    make_judgment(paper, v2, CLAUDE, {"novelty": 2})
    panels = judgment_panels(artifact=paper)
    assert [(p.rubric.version, p.rows[1].mean) for p in panels] == [(2, 2.0), (1, 8.0)]


def test_it_ends_an_unexpected_error_as_a_failed_judgment_not_a_stuck_one(paper, fake_llm):
    from judge.models import Rubric

    broken = Rubric.objects.create(
        stage="end2end", version=9, name="broken", instructions="x", dimensions=[{"key": "a"}]
    )
    judgment = judgment_execute(judgment=Judgment.objects.create(artifact=paper, rubric=broken, judge_model=CLAUDE))
    assert judgment.status == "failed" and judgment.error.startswith("internal error: KeyError")
    assert fake_llm.calls == []
