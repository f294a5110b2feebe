"""A judge reply cut at the token limit is never scored: it is asked again with a larger budget, or
recorded as truncated. The providers are faked at the HTTP transport, so the real SDKs report the
length stop (Anthropic `stop_reason: "max_tokens"`, OpenAI `finish_reason: "length"`)."""

import pytest

from judge.models import Judgment
from judge.parsing import ReplyTruncated, reply_parse
from judge.services import judgment_execute
from tests.judge.factories import make_artifact, make_research_run, rubric, valid_reply

pytestmark = pytest.mark.django_db

CLAUDE = "anthropic:claude-sonnet-4-5"
GPT = "openai:gpt-4o"


@pytest.fixture
def paper(db):
    return make_artifact(make_research_run(), "paper", "# Paper\n\nResults: 0.91.")


def _queued(paper, model):
    return Judgment.objects.create(artifact=paper, rubric=rubric("end2end"), judge_model=model)


def test_it_never_parses_a_cut_reply_even_when_its_json_is_complete():
    end2end = rubric("end2end")
    complete_json_then_cut = valid_reply(end2end, 7) + "\n\nA few more words on the paper's"
    assert reply_parse(complete_json_then_cut, end2end).scores["novelty"]["score"] == 7  # looks complete
    for stop in ("max_tokens", "length"):
        with pytest.raises(ReplyTruncated, match="cut off at the token limit"):
            reply_parse(complete_json_then_cut, end2end, stop_reason=stop)


def test_it_retries_an_anthropic_reply_cut_at_max_tokens_with_twice_the_budget(paper, fake_llm, settings):
    settings.JUDGE_MAX_TOKENS, settings.JUDGE_MAX_TOKENS_CAP = 1000, 8000
    end2end = rubric("end2end")
    # A cut reply whose JSON happens to be whole, with scores that must not be kept.
    fake_llm.anthropic(valid_reply(end2end, 2) + " and furthermore", tokens_out=1000, stop="max_tokens")
    fake_llm.anthropic(valid_reply(end2end, 8), tokens_out=1500)
    judgment = judgment_execute(judgment=_queued(paper, CLAUDE))
    assert judgment.status == "succeeded" and judgment.score_of("novelty") == 8
    assert [c["body"]["max_tokens"] for c in fake_llm.calls] == [1000, 2000]
    # The retry asks the same question again: the cut reply is not fed back as a conversation turn.
    assert fake_llm.calls[1]["body"]["messages"] == fake_llm.calls[0]["body"]["messages"]
    first, second = judgment.attempt_log
    assert first["truncated"] is True and first["stop_reason"] == "max_tokens" and first["max_tokens"] == 1000
    assert second["error"] == "" and judgment.tokens_received == 2500  # the cut reply's tokens are still paid for


def test_it_records_an_openai_reply_cut_at_every_budget_as_truncated(paper, fake_llm, settings):
    settings.JUDGE_MAX_TOKENS, settings.JUDGE_MAX_TOKENS_CAP, settings.JUDGE_MAX_ATTEMPTS = 1000, 2000, 5
    end2end = rubric("end2end")
    for _ in range(2):
        fake_llm.openai(valid_reply(end2end, 9), tokens_out=1000, stop="length")
    judgment = judgment_execute(judgment=_queued(paper, GPT))
    assert judgment.status == Judgment.Status.TRUNCATED and judgment.scores == {}
    assert judgment.score_of("novelty") is None
    budgets = [c["body"].get("max_completion_tokens", c["body"].get("max_tokens")) for c in fake_llm.calls]
    assert budgets == [1000, 2000]  # stops at the cap, not at 5 attempts
    assert judgment.error.startswith("truncated: the last reply, at a 2000-token budget (cap 2000")
    assert judgment.raw_reply.startswith("{")  # kept for the audit
    assert judgment.finished_at is not None


def test_it_records_truncated_when_the_attempts_run_out_before_the_cap(paper, fake_llm, settings):
    settings.JUDGE_MAX_TOKENS, settings.JUDGE_MAX_TOKENS_CAP, settings.JUDGE_MAX_ATTEMPTS = 500, 64000, 2
    fake_llm.anthropic('{"clarity": {"score": 7, "justifi', stop="max_tokens")
    fake_llm.anthropic('{"clarity": {"score": 7, "justification": "clear", "nov', stop="max_tokens")
    judgment = judgment_execute(judgment=_queued(paper, CLAUDE))
    assert judgment.status == "truncated" and "at a 1000-token budget" in judgment.error
    assert [c["body"]["max_tokens"] for c in fake_llm.calls] == [500, 1000]


def test_it_shows_a_truncated_judgment_as_unscored_on_the_artifact_panel(paper, fake_llm, settings):
    from judge.aggregate import judgment_panels

    settings.JUDGE_MAX_TOKENS, settings.JUDGE_MAX_TOKENS_CAP = 1000, 1000
    fake_llm.anthropic(valid_reply(rubric("end2end"), 9), stop="max_tokens")
    judgment_execute(judgment=_queued(paper, CLAUDE))
    [panel] = judgment_panels(artifact=paper)
    assert [j.status for j in panel.failed] == ["truncated"] and panel.succeeded == []
    assert all(row.mean is None for row in panel.rows)
