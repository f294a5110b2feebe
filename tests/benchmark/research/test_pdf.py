"""PDF papers (AI Scientist v2): text, tables and figures read with pdfplumber; a PDF with no text
layer or a broken one says so; a campaign never takes a paper it could not blind."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from benchmark.models import Artifact, ResearchRun
from benchmark.research.files import file_store
from benchmark.research.pdf import pdf_read
from tests.judge.test_mlr_reviews import SHARED

PAPER = SHARED / "ai_scientist_v2_papers/o4-mini/iclr2025_bi_align/iclr2025_bi_align.pdf"


@pytest.mark.shared_data(PAPER)
def test_it_reads_the_text_and_renders_the_figures_of_a_released_paper():
    paper = pdf_read(PAPER)
    assert paper.text_layer and paper.pages == 4 and paper.problems == []
    text = paper.markdown
    assert "CO-ADAPTIVE EXPLANATION INTERFACES" in text and "We introduce Co-Adaptive Explanation Interfaces" in text
    assert "explanations" in text.replace("\n", " ") or "explana-" not in text  # a split word is joined
    lines = [line.strip() for line in text.splitlines()]
    assert "000" not in lines and "001" not in lines  # the template's margin line numbers are dropped
    assert len(paper.figures) >= 5 and all(png.startswith(b"\x89PNG") for _, png in paper.figures)
    name, png = paper.figures[0]
    assert f"]({name})" in text and Image.open(io.BytesIO(png)).size[0] > 100


def test_a_pdf_without_a_text_layer_yields_no_text_and_says_so(tmp_path):
    scan = tmp_path / "scan.pdf"
    Image.new("RGB", (600, 800), "white").save(scan, "PDF")
    paper = pdf_read(scan)
    assert not paper.text_layer and paper.markdown == ""
    assert paper.problems == ["scan.pdf: no text layer (a scanned or image-only PDF): nothing to read or blind"]


def test_a_broken_pdf_is_named_not_raised(tmp_path):
    broken = tmp_path / "cut.pdf"
    broken.write_bytes(b"%PDF-1.4\n1 0 obj <<")
    paper = pdf_read(broken)
    assert not paper.text_layer and paper.problems and paper.problems[0].startswith("cut.pdf")


@pytest.mark.django_db
def test_a_campaign_refuses_a_pdf_paper_it_cannot_blind_and_never_offers_it(admin_user, settings, tmp_path):
    from judge.rubrics import rubric_latest, rubric_load_defaults
    from review.campaigns.forms import CampaignForm
    from review.campaigns.services import campaign_add_items
    from tests.judge.factories import make_task

    settings.MEDIA_ROOT = str(tmp_path / "media")
    task = make_task("iclr2025_scan")
    run = ResearchRun.objects.create(task=task, source=ResearchRun.Source.AI_SCIENTIST, backbone="o4-mini")
    scan = Artifact.objects.create(research_run=run, stage="paper", content="", status=Artifact.Status.DONE)
    scan.files = [file_store(artifact=scan, relative="p.pdf", data=b"%PDF-1.4\n")]
    scan.data = {"pdf": "p.pdf", "text_extracted": False}
    scan.save()
    read = Artifact.objects.create(
        research_run=ResearchRun.objects.create(task=task, source=ResearchRun.Source.AI_SCIENTIST, backbone="x"),
        stage="paper",
        content="# A paper\n\nIts text, extracted.",
        status=Artifact.Status.DONE,
        data={"pdf": "q.pdf", "text_extracted": True},
    )
    offered = set(CampaignForm().fields["artifacts"].queryset.values_list("pk", flat=True))
    assert read.pk in offered and scan.pk not in offered
    from review.models import Campaign

    rubric_load_defaults()
    campaign = Campaign.objects.create(name="pdfs", rubric=rubric_latest("end2end"), stage="end2end")
    with pytest.raises(ValueError, match="cannot be blinded.*iclr2025_scan"):
        campaign_add_items(campaign=campaign, artifacts=[scan, read])
    assert campaign.items.count() == 0
    assert campaign_add_items(campaign=campaign, artifacts=[read]) == 1


def test_the_pdf_module_is_the_only_importer_of_pdfplumber():
    root = Path(__file__).resolve().parents[3]
    importers = [
        str(path.relative_to(root))
        for folder in ("accounts", "benchmark", "config", "judge", "review", "sandbox")
        for path in (root / folder).rglob("*.py")
        if "import pdfplumber" in path.read_text() or "from pdfplumber" in path.read_text()
    ]
    assert importers == ["benchmark/research/pdf.py"]
