"""The judge lab end to end, with the LLM transport faked (the real SDK code runs): a gold set from a
campaign, judge configurations run over it N times as jobs, the bias probes, a regression comparison
with its bootstrap CIs and gate, and the gate guarding the default rubric version."""

from __future__ import annotations

import json

import django_rq
import pytest
from django.urls import reverse
from django.utils import timezone
from rq import SimpleWorker

from agreement.lab.services import comparison_create, experiment_report, gold_set_from_campaign
from judge.experiments import experiment_start, judge_config_create
from judge.models import JudgeExperiment, Judgment, RubricPolicy
from judge.rubrics import rubric_create_version
from review.campaigns.services import campaign_add_items
from review.models import Assignment, Campaign, JudgeComparison, Review
from tests.agreement.lab.client import computed_get
from tests.judge.factories import valid_reply
from tests.review.factories import END_TO_END_DIMENSIONS, make_paper, make_reviewer, make_rubric

pytestmark = pytest.mark.django_db

CLAUDE = "anthropic:claude-sonnet-4-5"
KEYS = [d["key"] for d in END_TO_END_DIMENSIONS]
TASKS = 6


def _scores(value: int) -> dict:
    return {k: {"score": value, "justification": "x"} for k in KEYS}


@pytest.fixture
def gold(db):
    """12 papers (6 tasks x claude/gemini), two identical submitted reviews each; item length grows by task."""
    rubric = make_rubric()
    papers = []
    for t in range(TASKS):
        for system in ("claude", "gemini"):
            words = " ".join(["word"] * (100 * (t + 1)))
            papers.append(make_paper(slug=f"ws_{t}", backbone=system, content=f"# Paper\n\n{words}", figures={}))
    campaign = Campaign.objects.create(name="lab study", rubric=rubric, reviewers_per_item=2)
    campaign_add_items(campaign=campaign, artifacts=papers)
    reviewers = [make_reviewer(f"lab-rev{n}") for n in range(3)]
    base = {}
    for i, paper in enumerate(papers):
        base[paper.pk] = 2 + (i % 4)
        item = campaign.items.get(artifact=paper)
        for slot in (1, 2):
            a = Assignment.objects.create(
                campaign=campaign, item=item, reviewer=reviewers[(i + slot) % 3], slot=slot, status="submitted"
            )
            Review.objects.create(
                assignment=a, scores=_scores(base[paper.pk]), status="submitted", submitted_at=timezone.now()
            )
    gold_set = gold_set_from_campaign(campaign=campaign, name="gold", user=None)
    return {"campaign": campaign, "rubric": rubric, "gold": gold_set, "papers": papers, "base": base}


def _drain(capture) -> None:
    queues = [django_rq.get_queue("judge"), django_rq.get_queue("default")]
    while any(q.count for q in queues):
        with capture(execute=True):
            SimpleWorker(queues, connection=queues[0].connection).work(burst=True)


def _run(gold, fake_llm, capture, config, replies, repeats=1, kind="rating") -> JudgeExperiment:
    for text in replies:
        fake_llm.anthropic(text)
    with capture(execute=True):
        experiment = experiment_start(config=config, gold_set=gold["gold"], repeats=repeats, kind=kind)
    _drain(capture)
    experiment.refresh_from_db()
    return experiment


def _lenient_replies(gold, extra=0, bumped=()):
    """Judge = human + 1, + 2 more on claude-written items (self-preference), + `extra`; bumped items +1."""
    out = []
    for i, paper in enumerate(gold["papers"]):
        score = gold["base"][paper.pk] + 1 + (2 if paper.research_run.backbone == "claude" else 0) + extra
        out.append(valid_reply(gold["rubric"], min(score + (1 if i in bumped else 0), 10)))
    return out


def test_it_runs_a_configuration_n_times_and_measures_stability_leniency_length_and_self_preference(
    gold, fake_llm, redis_client, django_capture_on_commit_callbacks, admin_user, client_for
):
    config = judge_config_create(name="claude v1", judge_model=CLAUDE, rubric=gold["rubric"], prompt_note="Be strict.")
    replies = _lenient_replies(gold) + _lenient_replies(gold, bumped=(0, 1, 2))
    experiment = _run(gold, fake_llm, django_capture_on_commit_callbacks, config, replies, repeats=2)
    assert experiment.status == "finished" and experiment.judgments.count() == 24
    assert sorted(set(experiment.judgments.values_list("repeat", flat=True))) == [0, 1]
    assert len(fake_llm.calls) == 24 and "Be strict." in fake_llm.calls[0]["body"]["system"]
    # Experiment judgments never enter the items' own panels or the campaign's agreement.
    assert not Judgment.objects.filter(experiment__isnull=True).exists()

    report = experiment_report(experiment)
    stability = report["stability"]["criteria"]["Overall"]
    assert stability["estimate"] == pytest.approx(3 * 0.70711 / 12, abs=1e-4)
    assert stability["extra"]["share_of_items_that_vary"] == pytest.approx(3 / 12)
    leniency = report["leniency"]["criteria"]["Overall"]
    assert leniency["shift"]["estimate"] == pytest.approx(2.0)  # +1 everywhere, +2 on half the items
    assert leniency["test"]["p_value"] < 0.01 and leniency["test"]["p_holm"] >= leniency["test"]["p_value"]
    selfpref = report["self_preference"]
    assert selfpref["judge_family"] == "anthropic" and selfpref["own_family_items"] == 6
    assert selfpref["criteria"]["Overall"]["estimate"] == pytest.approx(2.0)
    assert selfpref["criteria"]["Overall"]["ci_low"] == pytest.approx(2.0)  # no noise: the interval is the point
    length = report["length"]["criteria"]["Overall"]["slope_per_1000_words"]
    assert length["estimate"] == pytest.approx(0.0, abs=1e-9)  # same residuals at every length, per system
    page = computed_get(
        client_for(admin_user), reverse("agreement:lab_experiment", args=[experiment.code])
    ).content.decode()
    for probe in ("stability", "leniency", "length", "self_preference"):
        assert f'id="probe-{probe}"' in page
    data = json.loads(computed_get(client_for(admin_user), reverse("agreement:lab_report")).content)
    assert data["experiments"][0]["leniency"]["criteria"]["Overall"]["shift"]["estimate"] == pytest.approx(2.0)
    assert report["length"]["words"]["min"] == 102 and report["length"]["words"]["max"] == 602  # "# Paper" + words


def test_a_comparison_gives_every_statistic_its_change_and_ci_and_gates_the_default_rubric(
    gold, fake_llm, redis_client, django_capture_on_commit_callbacks, admin_user, client_for
):
    capture = django_capture_on_commit_callbacks
    v2 = rubric_create_version(stage="end2end", name="v2", instructions="Review it.", dimensions=END_TO_END_DIMENSIONS)
    base_cfg = judge_config_create(name="v1", judge_model=CLAUDE, rubric=gold["rubric"])
    same_cfg = judge_config_create(name="v2 same", judge_model=CLAUDE, rubric=v2)
    worse_cfg = judge_config_create(name="v2 worse", judge_model=CLAUDE, rubric=v2, prompt_note="Be generous.")
    baseline = _run(gold, fake_llm, capture, base_cfg, _lenient_replies(gold))
    same = _run(gold, fake_llm, capture, same_cfg, _lenient_replies(gold))
    worse = _run(gold, fake_llm, capture, worse_cfg, _lenient_replies(gold, extra=2))
    RubricPolicy.objects.create(stage="end2end", require_gate=True, statistic="mad_judge_human_mean", margin=0.5)
    with capture(execute=True):
        passing = comparison_create(baseline=baseline, candidate=same, user=admin_user, bootstrap=30)
        failing = comparison_create(baseline=baseline, candidate=worse, user=admin_user, bootstrap=30)
    _drain(capture)
    passing.refresh_from_db()
    failing.refresh_from_db()
    assert passing.status == failing.status == JudgeComparison.Status.FINISHED, (passing.error, failing.error)
    rows = {(r["criterion"], r["statistic"]): r for r in passing.result["statistics"]}
    assert {s for _, s in rows} >= {"mad_judge_human_mean", "kappa_quadratic", "spearman", "alt_test", "rmse"}
    mad = rows[("Overall", "mad_judge_human_mean")]
    assert (mad["baseline"], mad["candidate"], mad["change"], mad["ci_low"], mad["ci_high"]) == (
        2.0,
        2.0,
        0.0,
        0.0,
        0.0,
    )
    assert passing.result["gate"]["passed"] is True and passing.result["items"] == 12
    worse_mad = {(r["criterion"], r["statistic"]): r for r in failing.result["statistics"]}[
        ("Overall", "mad_judge_human_mean")
    ]
    assert worse_mad["candidate"] == pytest.approx(4.0) and worse_mad["change"] == pytest.approx(2.0)
    assert worse_mad["ci_low"] == pytest.approx(2.0) and worse_mad["ci_high"] == pytest.approx(
        2.0
    )  # every item 2 further off
    assert failing.result["gate"]["passed"] is False
    assert "not inside" in failing.result["gate"]["criteria"][0]["reason"]

    client = client_for(admin_user)
    # The rubric page refuses to make v2 the default directly: the policy requires a passing gate.
    client.post(reverse("judge:rubric_make_default", args=[v2.code]))
    v2.refresh_from_db()
    assert v2.is_default is False
    page = client.get(reverse("judge:rubric_detail", args=[v2.code])).content.decode()
    assert "requires a passing regression gate" in page
    # A failed comparison cannot make it the default; the passing one can, and is recorded as the evidence.
    client.post(reverse("agreement:lab_comparison_make_default", args=[failing.code]))
    v2.refresh_from_db()
    assert v2.is_default is False
    response = client.post(reverse("agreement:lab_comparison_make_default", args=[passing.code]))
    assert response.status_code == 302
    v2.refresh_from_db()
    assert v2.is_default is True and v2.default_evidence["gate"]["comparison"] == str(passing.code)
    assert v2.default_evidence["by"] == admin_user.username
    html = client.get(reverse("agreement:lab_comparison", args=[passing.code])).content.decode()
    assert "Gate: PASSED" in html and "Every statistic" in html
    data = json.loads(client.get(reverse("agreement:lab_comparison", args=[passing.code]) + "?format=json").content)
    assert data["gate"]["passed"] is True and data["baseline"]["rubric_code"] == str(gold["rubric"].code)


def test_a_pairwise_experiment_measures_position_consistency(
    gold, fake_llm, redis_client, django_capture_on_commit_callbacks
):
    config = judge_config_create(name="pairwise", judge_model=CLAUDE, rubric=gold["rubric"])
    # The judge always prefers whatever it is shown first: fully inconsistent, first-position rate 1.
    replies = [json.dumps({"preferred": "first", "justification": "it reads better"})] * (TASKS * 2)
    experiment = _run(gold, fake_llm, django_capture_on_commit_callbacks, config, replies, kind="pairwise")
    assert experiment.status == "finished" and experiment.pairwise.count() == TASKS * 2
    prompt = fake_llm.calls[0]["body"]["messages"][0]["content"]
    assert "# The first Paper" in prompt and "# The second Paper" in prompt
    position = experiment_report(experiment)["position"]
    assert position["pairs_answered_both_ways"] == TASKS
    assert position["consistency"]["estimate"] == 0.0
    assert position["first_position_rate"]["estimate"] == 1.0 and position["first_position_rate"]["p_value"] < 0.001


def test_a_truncated_pairwise_reply_is_never_read_as_a_preference(
    gold, fake_llm, redis_client, django_capture_on_commit_callbacks, settings
):
    settings.JUDGE_MAX_TOKENS, settings.JUDGE_MAX_TOKENS_CAP = 500, 500
    config = judge_config_create(name="pairwise cut", judge_model=CLAUDE, rubric=gold["rubric"])
    for _ in range(TASKS * 2):
        fake_llm.anthropic(json.dumps({"preferred": "first", "justification": "x"}), stop="max_tokens")
    with django_capture_on_commit_callbacks(execute=True):
        experiment = experiment_start(config=config, gold_set=gold["gold"], kind="pairwise")
    _drain(django_capture_on_commit_callbacks)
    assert set(experiment.pairwise.values_list("status", "preferred")) == {("truncated", "")}
    experiment.refresh_from_db()
    assert experiment.status == "failed" and "no judgment" in experiment.error


@pytest.mark.parametrize(
    "name,args,method",
    [
        ("lab", [], "get"),
        ("lab_report", [], "get"),
        ("lab_hallucination", [], "get"),
        ("lab_fabrication", [], "get"),
        ("lab_gold_set", [], "post"),
        ("lab_config", [], "post"),
        ("lab_experiment_start", [], "post"),
        ("lab_comparison_create", [], "post"),
        ("lab_fabrication_audit", [], "post"),
    ],
)
def test_the_lab_is_for_admins_only(name, args, method, admin_user, researcher, reviewer, client_for):
    url = reverse(f"agreement:{name}", args=args)
    assert getattr(client_for(researcher), method)(url).status_code == 403
    assert getattr(client_for(reviewer), method)(url).status_code == 403
    anonymous = getattr(client_for(None), method)(url)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    wrong = "post" if method == "get" else "get"
    assert getattr(client_for(admin_user), wrong)(url).status_code == 405
    ok = getattr(client_for(admin_user), method)(url)
    assert ok.status_code in (200, 202, 302)  # 202: the statistics pages queue their job


def test_experiment_and_comparison_pages_check_who_asks_and_the_code(
    gold, admin_user, researcher, reviewer, client_for
):
    import uuid

    config = judge_config_create(name="c", judge_model=CLAUDE, rubric=gold["rubric"])
    experiment = JudgeExperiment.objects.create(config=config, gold_set=gold["gold"])
    comparison = JudgeComparison.objects.create(baseline=experiment, candidate=experiment)
    for name, code in (("lab_experiment", experiment.code), ("lab_comparison", comparison.code)):
        url = reverse(f"agreement:{name}", args=[code])
        assert client_for(admin_user).get(url).status_code == (202 if name == "lab_experiment" else 200)
        assert client_for(researcher).get(url).status_code == 403
        assert client_for(reviewer).get(url).status_code == 403
        assert client_for(None).get(url).status_code == 302
        assert client_for(admin_user).post(url).status_code == 405
        assert client_for(admin_user).get(reverse(f"agreement:{name}", args=[uuid.uuid4()])).status_code == 404
    make_default = reverse("agreement:lab_comparison_make_default", args=[comparison.code])
    assert client_for(researcher).post(make_default).status_code == 403
    assert client_for(admin_user).get(make_default).status_code == 405


def test_the_lab_forms_reject_bad_input_with_a_message(gold, admin_user, client_for):
    client = client_for(admin_user)
    response = client.post(reverse("agreement:lab_config"), {"judge_model": "gpt-4o", "rubric": gold["rubric"].code,
                                                                      "temperature": 0}, follow=True)  # fmt: skip
    assert "must read provider:model" in response.content.decode()
    response = client.post(
        reverse("agreement:lab_gold_set"), {"campaign": gold["campaign"].code, "name": "gold"}, follow=True
    )
    assert "exists already" in response.content.decode()


def test_it_shows_an_imported_experiment_whose_gold_set_names_no_campaign(client_for, admin_user):
    """MLR-Bench's no-code ablation is imported as a finished experiment with no human campaign behind it."""
    from judge.mlr_reviews import ablation_experiment
    from tests.judge.factories import rubric

    experiment = ablation_experiment(judge_model="anthropic:x", rubric=rubric("end2end"), papers=[make_paper()])
    assert (
        experiment.gold_set.reference == ""
        and experiment_report(experiment)["experiment"]["with_supplementary"] is False
    )
    page = client_for(admin_user).get(reverse("agreement:lab_experiment", args=[experiment.code]))
    assert page.status_code == 200 and "anthropic:x without code" in page.content.decode()
