"""Judge vs judge on the stepwise results, with the agreement suite's own statistics: checked against
direct computations on a small set, run on the released 2 x 2,412 reviews, and guarded."""

from __future__ import annotations

import csv
import io
import re

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse
from scipy import stats as sps

from agreement import cache
from agreement.lab.judge_pair import judge_pair_analysis
from agreement.lab.probes import self_preference_judges
from tests.agreement.lab.client import computed_get
from tests.benchmark.mlrbench_data import MLRBENCH, needs_data
from tests.judge.factories import make_judgment, make_stepwise_item, make_task, rubric

pytestmark = pytest.mark.django_db
CLAUDE, GEMINI = "anthropic:claude-3-7-sonnet-20250219", "google:gemini-2.5-pro-preview-03-25"
KEYS = ("consistency", "clarity", "novelty", "feasibility", "significance", "overall")
A = [8, 7, 6, 9, 5, 7, 8, 6, 7, 4, 6, 8]
B = [7, 7, 5, 8, 6, 6, 8, 5, 6, 5, 5, 7]
MODELS = ["claude-3-7-sonnet-20250219", "gemini-2.5-pro-preview-03-25", "deepseek-r1"]


@pytest.fixture
def pairs(db):
    idea = rubric("idea")
    for i, (a, b) in enumerate(zip(A, B, strict=True)):
        item = make_stepwise_item(make_task(f"iclr2025_t{i}"), MODELS[i % 3], "idea")
        make_judgment(item, idea, CLAUDE, dict.fromkeys(KEYS, a))
        make_judgment(item, idea, GEMINI, dict.fromkeys(KEYS, b))


def test_it_computes_the_two_rater_statistics_of_the_suite(pairs):
    result = judge_pair_analysis(stage="idea", n_boot=200)
    assert result["raters"] == {"a": CLAUDE, "b": GEMINI} and result["sizes"]["items"] == 12
    s = result["criteria"]["Overall"]
    a, b = np.array(A, float), np.array(B, float)
    assert s["spearman"]["estimate"] == pytest.approx(sps.spearmanr(a, b)[0])
    assert s["kendall"]["estimate"] == pytest.approx(sps.kendalltau(a, b)[0])
    assert s["pearson"]["estimate"] == pytest.approx(sps.pearsonr(a, b)[0])
    assert s["mad"]["estimate"] == pytest.approx(np.mean(np.abs(a - b)))
    assert s["bias_a_minus_b"]["estimate"] == pytest.approx(np.mean(a - b))
    assert s["percent_agreement"]["estimate"] == pytest.approx(np.mean(a == b))
    # Quadratic weighted kappa by hand over the 1-10 scale.
    d = ((a[:, None] - b[None, :]) / 9) ** 2
    expected = 1 - np.mean(((a - b) / 9) ** 2) / d.mean()
    assert s["kappa_quadratic"]["estimate"] == pytest.approx(expected)
    assert s["wilcoxon_signed_rank"]["p_holm"] >= s["wilcoxon_signed_rank"]["p_value"]
    assert s["decision_at_threshold"]["extra"]["confusion"]["judge_accept_human_accept"] == int(
        np.sum((a >= 6) & (b >= 6))
    )
    assert not np.isnan(s["icc_2_1"]["estimate"]) and not np.isnan(s["alpha_interval"]["estimate"])
    assert {"alt_test", "mlrbench_mann_whitney_u"} <= set(result["left_out"])  # named, with why
    systems = {r["system"]: r for r in result["systems"]["Overall"]["systems"]}
    assert systems["deepseek-r1"]["judge_mean"] == pytest.approx(np.mean(a[2::3]))


def test_it_is_cached_until_a_judgment_changes(pairs):
    from judge.models import Judgment

    before = cache.computed["judge_pair"]
    judge_pair_analysis(stage="idea", n_boot=50)
    judge_pair_analysis(stage="idea", n_boot=50)
    assert cache.computed["judge_pair"] == before + 1
    j = Judgment.objects.filter(judge_model=GEMINI).first()
    j.status = "failed"
    j.save()
    assert judge_pair_analysis(stage="idea", n_boot=50)["criteria"]["Overall"]["coverage"]["n"]["items_used"] == 11
    assert cache.computed["judge_pair"] == before + 2


def test_self_preference_between_judges_uses_items_of_neither_family_as_the_reference(db):
    from judge.leaderboard import stepwise_matrix

    idea = rubric("idea")
    for i in range(12):
        model = MODELS[i % 3]
        item = make_stepwise_item(make_task(f"iclr2025_s{i}"), model, "idea")
        claude = 8 if model.startswith("claude") else 6  # Claude likes Claude's ideas 2 points more
        make_judgment(item, idea, CLAUDE, dict.fromkeys(KEYS, claude))
        make_judgment(item, idea, GEMINI, dict.fromkeys(KEYS, 6))
    result = self_preference_judges(stepwise_matrix("idea", idea))
    own = result["judges"][CLAUDE]["criteria"]["Overall"]
    assert own["estimate"] == pytest.approx(2.0) and own["n"] == {"own_family_items": 4, "other_items": 4}
    assert result["judges"][GEMINI]["criteria"]["Overall"]["estimate"] == pytest.approx(0.0)


def test_the_page_and_downloads_are_for_researchers_and_admins_never_reviewers(
    pairs, researcher, reviewer, admin_user, client_for, redis_client
):
    page = reverse("agreement:lab_judge_pair", args=["idea"])
    for fmt in ("csv", "json"):
        url = reverse("agreement:lab_judge_pair_download", args=["idea", fmt])
        assert computed_get(client_for(researcher), url).status_code == 200
        assert client_for(reviewer).get(url).status_code == 403
    html = client_for(researcher).get(page).content.decode()
    assert "Self-preference between the judges" in html and "Cohen&#x27;s kappa, quadratic weights" in html
    assert client_for(admin_user).get(page).status_code == 200
    assert client_for(reviewer).get(page).status_code == 403
    assert client_for(None).get(page).status_code == 302
    assert client_for(researcher).post(page).status_code == 405
    assert client_for(researcher).get(reverse("agreement:lab_judge_pair", args=["paper"])).status_code == 404
    assert (
        client_for(researcher).get(reverse("agreement:lab_judge_pair_download", args=["idea", "xml"])).status_code
        == 404
    )
    rows = list(csv.DictReader(io.StringIO(client_for(researcher).get(
        reverse("agreement:lab_judge_pair_download", args=["idea", "csv"])).content.decode())))  # fmt: skip
    assert {r["statistic"] for r in rows} >= {"kappa_quadratic", "icc_2_1", "wilcoxon_signed_rank"}
    proposals = reverse("agreement:lab_judge_pair", args=["proposal"])
    empty = computed_get(client_for(researcher), proposals).content.decode()
    assert "import them with manage.py import_mlr_stepwise" in empty


@needs_data
def test_it_measures_how_far_claude_and_gemini_agree_on_the_released_ideas_and_proposals():
    call_command("import_mlr_stepwise", str(MLRBENCH), stdout=io.StringIO())
    for stage, criteria in (("idea", 6), ("proposal", 7)):
        result = judge_pair_analysis(stage=stage, n_boot=100)
        assert result["sizes"]["items"] == 1206 and result["sizes"]["systems"] == 6
        assert len(result["criteria"]) == criteria
        overall = result["criteria"]["Overall"]
        assert overall["coverage"]["n"] == {"items_used": 1206, "items_total": 1206}
        assert -1 <= overall["kappa_quadratic"]["estimate"] <= 1 and overall["spearman"]["n"]["items"] == 1206
        assert len(result["systems"]["Overall"]["systems"]) == 6  # each judge's mean per model, and their ranks


def test_it_says_what_its_model_count_counts_and_each_per_model_table_has_that_many_rows(
    pairs, researcher, client_for, redis_client
):
    """The line above the tables counts the models that wrote the items; the table right under it
    lists statistics (issue 33 read "6 models" above a table of other rows). Each criterion's
    per-model table has one row per counted model, an item scored by one judge only included."""
    item = make_stepwise_item(make_task("iclr2025_lone"), "qwen3-235b-a22b", "idea")
    make_judgment(item, rubric("idea"), CLAUDE, dict.fromkeys(KEYS, 6))
    html = computed_get(client_for(researcher), reverse("agreement:lab_judge_pair", args=["idea"])).content.decode()
    sizes = re.search(r'<p id="judge-pair-sizes">(.*?)</p>', html, re.S).group(1)
    assert "13 ideas written by 4 models" in sizes and "Per model" in sizes
    tables = re.findall(r"<h3>Per model \((\d+)\)</h3><table>(.*?)</table>", html, re.S)
    assert len(tables) == len(KEYS)
    for count, table in tables:
        models = re.findall(r"<tr><th>([^<]+)</th><td>", table)
        assert int(count) == 4 and sorted(models) == sorted([*MODELS, "qwen3-235b-a22b"])
