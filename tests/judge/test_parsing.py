"""Judge replies: safe repairs are made and reported; anything else is rejected with a precise error."""

import json

import pytest

from judge.parsing import ReplyError, extract_json, reply_parse
from tests.judge.factories import rubric, valid_reply

pytestmark = pytest.mark.django_db


def test_it_accepts_a_clean_reply_without_repairs():
    end2end = rubric("end2end")
    parsed = reply_parse(valid_reply(end2end, 8), end2end)
    assert parsed.repairs == []
    assert parsed.scores["novelty"] == {"score": 8, "justification": "Novelty reasons"}
    assert parsed.scores["confidence"]["score"] == 4


def test_it_removes_a_code_fence_and_surrounding_prose():
    end2end = rubric("end2end")
    text = "Sure! Here is my review.\n```json\n" + valid_reply(end2end, 6) + "\n```\nLet me know if you need more."
    parsed = reply_parse(text, end2end)
    assert parsed.scores["clarity"]["score"] == 6
    assert "removed a code fence" in parsed.repairs


def test_it_removes_prose_around_an_unfenced_object():
    data, repairs = extract_json('My scores follow. {"a": 1} Hope this helps {really}.')
    assert data == {"a": 1}
    assert repairs == ["removed prose around the JSON object"]


def test_it_removes_trailing_commas_outside_strings_only():
    data, repairs = extract_json('{"a": [1, 2,], "b": "x, }", "c": {"d": 1,},}')
    assert data == {"a": [1, 2], "b": "x, }", "c": {"d": 1}}
    assert repairs == ["removed 3 trailing comma(s)"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (r"\alpha + \sum_i x_i", r"\alpha + \sum_i x_i"),  # invalid JSON escapes
        (r"\frac{1}{2} and \beta", r"\frac{1}{2} and \beta"),  # valid escapes (\f, \b) that are LaTeX
        (r"\theta and \nabla f and \rho", r"\theta and \nabla f and \rho"),  # \t \n \r + a LaTeX command
        ("first line\\nsecond\\ttab", "first line\nsecond\ttab"),  # real escapes stay escapes
        (r"quote \"inside\"", 'quote "inside"'),
    ],
)
def test_it_keeps_latex_backslashes_and_real_escapes(raw, expected):
    data, _ = extract_json('{"j": "' + raw + '"}')
    assert data["j"] == expected


def test_it_reads_smart_quotes_used_as_json_quotes():
    text = '{\u201cj\u201d: \u201cthe paper says \u201cnovel\u201d and "new"\u201d, \u201cn\u201d: 3}'
    data, repairs = extract_json(text)
    assert data == {"j": 'the paper says \u201cnovel\u201d and "new"', "n": 3}
    assert repairs == ["replaced 3 smart-quoted string delimiter(s)"]


def test_it_keeps_smart_quotes_inside_ordinary_strings():
    data, repairs = extract_json('{"j": "they call it \u201cnovel\u201d, which it is not"}')
    assert data["j"] == "they call it \u201cnovel\u201d, which it is not"
    assert repairs == []


def test_it_matches_dimension_names_in_any_case():
    end2end = rubric("end2end")
    body = {k.upper() if k != "overall" else "Overall": v for k, v in json.loads(valid_reply(end2end)).items()}
    parsed = reply_parse(json.dumps(body), end2end)
    assert set(parsed.scores) == {"clarity", "novelty", "soundness", "significance", "overall", "confidence"}
    assert parsed.repairs == ["matched 6 dimension name(s) to rubric keys"]


def test_it_accepts_a_bare_confidence_and_overall_strengths_as_mlrbench_wrote_them():
    end2end = rubric("end2end")
    body = json.loads(valid_reply(end2end))
    body["confidence"] = 5
    body["overall"] = {"score": 7, "strengths": ["clear"], "weaknesses": ["small"]}
    parsed = reply_parse(json.dumps(body), end2end)
    assert parsed.scores["confidence"] == {"score": 5, "justification": ""}
    assert parsed.scores["overall"]["weaknesses"] == ["small"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"novelty": {"score": 11, "justification": "x"}}, "novelty.score: Input should be less than or equal to 10"),
        ({"novelty": {"score": 0, "justification": "x"}}, "novelty.score: Input should be greater than or equal to 1"),
        (
            {"novelty": {"score": 7.5, "justification": "x"}},
            "novelty.score: Value error, must be an integer from 1 to 10",
        ),
        ({"novelty": {"score": "seven", "justification": "x"}}, "novelty.score: Input should be a valid integer"),
        ({"novelty": {"score": True, "justification": "x"}}, "novelty.score: Value error, must be an integer"),
        ({"novelty": {"justification": "x"}}, "novelty.score: is missing"),
        ({"confidence": 6}, "confidence.score: Input should be less than or equal to 5"),
        ({"novelty": {"score": 7, "justification": "  "}}, "justification is missing or empty for: novelty"),
    ],
)
def test_it_rejects_invalid_scores_naming_the_field(change, message):
    end2end = rubric("end2end")
    body = {**json.loads(valid_reply(end2end)), **change}
    with pytest.raises(ReplyError) as error:
        reply_parse(json.dumps(body), end2end)
    assert message in str(error.value)


def test_it_rejects_a_missing_dimension():
    end2end = rubric("end2end")
    body = json.loads(valid_reply(end2end))
    del body["soundness"]
    with pytest.raises(ReplyError, match=r"^soundness: is missing$"):
        reply_parse(json.dumps(body), end2end)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the reply is empty"),
        ("I cannot review this paper.", "no JSON object in the reply"),
        ('{"novelty": {"score": 7, "justification": "cut off', "the JSON object is not closed"),
        (
            '{"novelty": {"score": 7 "justification": "x"}}',
            "invalid JSON at line 1, column 25: Expecting ',' delimiter",
        ),
        ("{'novelty': 7}", "invalid JSON at line 1, column 2: Expecting property name enclosed in double quotes"),
    ],
)
def test_it_rejects_what_it_cannot_safely_repair(text, message):
    with pytest.raises(ReplyError) as error:
        reply_parse(text, rubric("end2end"))
    assert message in str(error.value)


def test_it_takes_true_false_for_a_flag_and_validates_findings():
    experiment = rubric("experiment")
    body = json.loads(valid_reply(experiment))
    body["hallucination"] = {"score": True, "justification": "table 2 has no log"}
    assert reply_parse(json.dumps(body), experiment).scores["hallucination"]["score"] == 1
    audit = rubric("hallucination")
    good = {"findings": [{"type": "faked_results", "evidence": "no run wrote 0.93", "location": "Table 2"}],
            "integrity": {"score": 3, "justification": "core numbers invented"}}  # fmt: skip
    parsed = reply_parse(json.dumps(good), audit)
    assert parsed.findings[0]["type"] == "faked_results"
    assert "findings" not in parsed.scores
    good["findings"][0]["type"] = "vibes"
    with pytest.raises(ReplyError, match=r"findings\.0\.type: Input should be 'faked_results'"):
        reply_parse(json.dumps(good), audit)
