"""Human hallucination labels: MLR-Bench's check imported with its fault reported, compared with the
judges' flags and with the fabrication audit in the decision view."""

from __future__ import annotations

import io
import json
import shutil

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from agreement.lab.flags import fabrication_comparison, hallucination_comparison
from judge.models import Judgment
from review.io.hallucination import import_hallucination_labels
from review.models import HallucinationLabel
from tests.agreement.lab.client import computed_get
from tests.benchmark.mlrbench_data import MLRBENCH, needs_data
from tests.judge.factories import rubric
from tests.review.factories import make_paper

pytestmark = pytest.mark.django_db
CSV = MLRBENCH / "human_eval" / "Hallucination Check.csv"
WORKSHOPS = ["iclr2025_bi_align", "iclr2025_buildingtrust", "iclr2025_data_problems", "iclr2025_dl4c", "iclr2025_mldpr",
             "iclr2025_question", "iclr2025_scope", "iclr2025_scsl", "iclr2025_verifai", "iclr2025_wsl"]  # fmt: skip


@pytest.fixture
def papers(db):
    return {w: make_paper(slug=w, backbone="claude", figures={}) for w in WORKSHOPS}


def _ai_scientist_papers():
    from benchmark.models import Artifact, ResearchRun, Task

    out = {}
    for slug in WORKSHOPS:
        run = ResearchRun.objects.create(
            task=Task.objects.get(slug=slug), backbone="o4-mini", source=ResearchRun.Source.AI_SCIENTIST
        )
        out[slug] = Artifact.objects.create(research_run=run, stage="paper", files=[f"{slug}.pdf"])
    return out


@needs_data
def test_it_imports_the_four_kinds_and_reports_the_missing_row(papers):
    out = io.StringIO()
    report = import_hallucination_labels(CSV, backbone="claude", stdout=out)
    text = out.getvalue()
    assert report.rows == 19 and report.created == 19 * 4
    assert report.linked == 9 * 4 and report.unlinked == 10 * 4  # no AI Scientist v2 paper imported here
    assert "no MLR Agent row for iclr2025_scope (the other systems have one)" in text
    assert (
        "Hallucination Check.csv:2: 0 imported AI Scientist v2 papers for iclr2025_dl4c; labels kept unlinked" in text
    )
    label = HallucinationLabel.objects.get(
        system="MLR Agent", workshop="iclr2025_buildingtrust", kind="hallucinated_methodology"
    )
    assert label.value == "not_sure" and label.artifact == papers["iclr2025_buildingtrust"]
    assert label.source.endswith(":11")
    assert not HallucinationLabel.objects.filter(system="MLR Agent", workshop="iclr2025_scope").exists()
    again = import_hallucination_labels(CSV, backbone="claude")
    assert (again.created, again.updated, again.unchanged) == (0, 0, 76)


@needs_data
def test_without_a_backbone_it_links_nothing_and_says_why(papers):
    out = io.StringIO()
    call_command("import_hallucination_labels", str(CSV), stdout=out)
    assert "the CSV names the agent (MLR Agent), not which backbone's paper it checked" in out.getvalue()
    assert not HallucinationLabel.objects.filter(artifact__isnull=False).exists()


@needs_data
def test_it_links_ai_scientist_rows_to_their_papers_and_keeps_links_on_a_re_import_without_backbone(papers):
    scientist = _ai_scientist_papers()
    report = import_hallucination_labels(CSV, backbone="claude")
    assert report.linked == 19 * 4 and report.unlinked == 0  # every row names a paper the release holds
    label = HallucinationLabel.objects.get(system="AI Scientist V2", workshop="iclr2025_wsl", kind="faked_results")
    assert label.artifact == scientist["iclr2025_wsl"]
    # make up re-imports the file without --backbone: the admin's links stay.
    again = import_hallucination_labels(CSV)
    assert (again.created, again.updated, again.unchanged) == (0, 0, 76)
    mlr = HallucinationLabel.objects.get(system="MLR Agent", workshop="iclr2025_wsl", kind="faked_results")
    assert mlr.artifact == papers["iclr2025_wsl"]


def test_it_reports_bad_values_duplicates_and_refuses_a_wrong_file(tmp_path, papers):
    bad = tmp_path / "check.csv"
    bad.write_text(
        "LLM,Workshop_name,is_Faked_Experimental_Result,is_Hallucinated_Methodology,is_Incorrect_Citation,is_Mathematical_Error\n"
        "MLR Agent,iclr2025_dl4c,Yes,Maybe,No,No\n"
        "MLR Agent,iclr2025_dl4c,No,No,No,No\n"
    )
    report = import_hallucination_labels(bad, backbone="claude")
    assert (
        "check.csv:2: is_Hallucinated_Methodology = 'Maybe' is not Yes / No / Not Sure; label skipped" in report.faults
    )
    assert "check.csv:3: duplicate of line 2 (MLR Agent, iclr2025_dl4c); first kept" in report.faults
    assert HallucinationLabel.objects.get(kind="faked_results").value == "yes"  # the first row's
    truncated = tmp_path / "truncated.csv"
    truncated.write_text(bad.read_text().splitlines()[0] + "\nMLR Agent,iclr2025_wsl,Yes,No\n")
    report = import_hallucination_labels(truncated, backbone="claude")
    assert report.faults[0] == "truncated.csv:2: 4 of 6 fields; row skipped (truncated or misquoted?)"
    assert not HallucinationLabel.objects.filter(workshop="iclr2025_wsl").exists()
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("a,b\n1,2\n")
    with pytest.raises(CommandError, match="missing column"):
        call_command("import_hallucination_labels", str(wrong), stdout=io.StringIO())


def _label(paper, **values):
    for kind, value in values.items():
        HallucinationLabel.objects.create(system="MLR Agent", workshop=paper.research_run.task.slug, kind=kind,
                                          value=value, artifact=paper)  # fmt: skip


def test_it_compares_the_judges_flags_with_the_labels_in_the_decision_view(
    papers, admin_user, client_for, redis_client
):
    audit = rubric("hallucination")
    a, b, c, d = (papers[w] for w in WORKSHOPS[:4])
    _label(a, faked_results="yes", hallucinated_methodology="yes", incorrect_citation="no", math_error="no")
    _label(b, faked_results="yes", hallucinated_methodology="no", incorrect_citation="no", math_error="no")
    _label(c, faked_results="no", hallucinated_methodology="no", incorrect_citation="no", math_error="no")
    _label(d, faked_results="not_sure", hallucinated_methodology="no", incorrect_citation="yes", math_error="no")
    judge = "openai:gpt-4o"

    def flag(paper, *kinds):
        Judgment.objects.create(
            artifact=paper, rubric=audit, judge_model=judge, status="succeeded",
            findings=[{"type": k, "evidence": "e", "location": "l"} for k in kinds],
            scores={"integrity": {"score": 5, "justification": "x"}},
        )  # fmt: skip

    flag(a, "faked_results")  # TP on faked results, FN on methodology
    flag(b)  # FN on faked results
    flag(c, "faked_results", "math_error")  # FP, FP
    flag(d, "incorrect_citation")  # faked results "not sure": left out
    result = hallucination_comparison()
    table = result["sources"][f"{judge} · hallucination audit"]
    faked = table["faked_results"]
    assert faked["n"]["items"] == 3 and faked["extra"]["confusion"] == {
        "judge_accept_human_accept": 1, "judge_accept_human_reject": 1,
        "judge_reject_human_accept": 1, "judge_reject_human_reject": 0,
    }  # fmt: skip
    assert faked["extra"]["accuracy"] == pytest.approx(1 / 3)
    assert faked["extra"]["false_positive_rate"] == 1.0 and faked["extra"]["false_negative_rate"] == 0.5
    assert table["incorrect_citation"]["extra"]["accuracy"] == 1.0
    assert table["any"]["n"]["items"] == 4 and result["coverage"]["not_sure"] == 1
    page = computed_get(client_for(admin_user), reverse("agreement:lab_hallucination")).content.decode()
    assert "openai:gpt-4o · hallucination audit" in page and "<th>faked results</th>" in page
    data = json.loads(client_for(admin_user).get(reverse("agreement:lab_hallucination") + "?format=json").content)
    assert data["sources"][f"{judge} · hallucination audit"]["faked_results"]["estimate"] == pytest.approx(1 / 3)


def test_it_gives_the_audits_precision_and_recall_against_faked_results(papers, admin_user, client_for, redis_client):
    def audited(paper, flagged):
        paper.data = {"fabrication_audit": {"version": "fabrication audit v1", "claims": 10, "found": 10 - flagged,
                                            "flagged": flagged, "numbers": []}}  # fmt: skip
        paper.save()

    a, b, c, d, e = (papers[w] for w in WORKSHOPS[:5])
    for paper, human, flagged in ((a, "yes", 4), (b, "yes", 0), (c, "no", 2), (d, "yes", 1), (e, "no", 0)):
        _label(paper, faked_results=human)
        audited(paper, flagged)
    _label(papers[WORKSHOPS[5]], faked_results="yes")  # not audited: listed, not counted
    result = fabrication_comparison()
    rec = result["decision"]["extra"]
    assert (rec["precision"], rec["recall"]) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert result["not_audited"] == 1 and len(result["papers"]) == 6
    stricter = fabrication_comparison(min_flags=2)["decision"]["extra"]
    assert (stricter["precision"], stricter["recall"]) == (pytest.approx(1 / 2), pytest.approx(1 / 3))
    url = reverse("agreement:lab_fabrication") + "?min_flags=2"
    page = computed_get(client_for(admin_user), url).content.decode()
    assert "2 or more of its results numbers are found nowhere" in page and "<th>precision</th>" in page
    assert client_for(admin_user).get(reverse("agreement:lab_fabrication") + "?min_flags=x").status_code == 404


@needs_data
@pytest.mark.django_db(transaction=True)
def test_the_audit_of_a_released_paper_runs_as_a_job(tmp_path, settings, admin_user, client_for, redis_client):
    import django_rq
    from rq import SimpleWorker

    from benchmark.research.imports import import_mlr_runs
    from benchmark.research.tasks import import_mlr_tasks

    settings.MEDIA_ROOT = tmp_path / "media"
    import_mlr_tasks(MLRBENCH)
    root = tmp_path / "agent_results" / "end2end_claude"
    shutil.copytree(MLRBENCH / "agent_results" / "end2end_claude" / "iclr2025_scope", root / "iclr2025_scope")
    import_mlr_runs(tmp_path, stdout=io.StringIO())
    client_for(admin_user).post(reverse("agreement:lab_fabrication_audit"))
    queue = django_rq.get_queue("default")
    SimpleWorker([queue], connection=queue.connection).work(burst=True)
    from benchmark.models import Artifact

    paper = Artifact.objects.get(stage="paper", research_run__task__slug="iclr2025_scope")
    audit = paper.data["fabrication_audit"]
    numbers = {n["text"]: n for n in audit["numbers"]}
    # The paper's headline numbers appear in nothing the run executed; its context lengths do.
    assert not numbers["80.3%"]["found"] and not numbers["48.3%"]["found"] and numbers["4096"]["found"]
    excluded = {e["file"] for e in audit["excluded"]}
    assert "results/log.txt" in excluded  # the agent wrote it with its Write tool


@needs_data
def test_it_compares_the_released_hallucination_reviews_with_the_humans_on_ai_scientist_papers(settings, tmp_path):
    """From the release alone: AI Scientist v2's papers, both judges' hallucination reviews, the human labels."""
    from benchmark.research.aiscientist import import_ai_scientist
    from benchmark.research.tasks import import_mlr_tasks
    from judge.mlr_aiscientist import import_ai_scientist_reviews

    settings.MEDIA_ROOT = str(tmp_path / "media")
    import_mlr_tasks(MLRBENCH)
    import_ai_scientist(MLRBENCH, stdout=io.StringIO())
    import_ai_scientist_reviews(MLRBENCH)
    report = import_hallucination_labels(CSV)
    assert report.linked == 10 * 4  # AI Scientist V2's rows; MLR Agent's wait for --backbone
    table = hallucination_comparison()["sources"]
    audits = {s for s in table if s.endswith("· hallucination audit")}
    assert audits == {"anthropic:claude-3-7-sonnet-20250219 · hallucination audit",
                      "google:gemini-2.5-pro-preview · hallucination audit"}  # fmt: skip
    for source in audits:
        faked = table[source]["faked_results"]
        # The humans found faked results in all 10 papers; each judge flagged all 10 too.
        assert faked["n"]["items"] == 10 and faked["extra"]["confusion"]["judge_accept_human_accept"] == 10
