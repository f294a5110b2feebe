"""Demo data of the review app: the MLR-Bench human study as a campaign, when its papers are imported."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from django.conf import settings

from benchmark.models import Artifact, ResearchRun
from judge.models import Rubric

CAMPAIGN_NAME = "MLR-Bench human study (end-to-end papers)"


def seed(stdout: TextIO) -> None:
    root = Path(settings.MLRBENCH_DIR) if getattr(settings, "MLRBENCH_DIR", "") else None
    csv_path = root / "human_eval" / "human_review.csv" if root else None
    if csv_path is None or not csv_path.is_file():
        stdout.write("MLR-Bench human reviews: no human_eval/human_review.csv under MLRBENCH_DIR; skipped\n")
        return
    papers = Artifact.objects.filter(stage=Artifact.Stage.PAPER, research_run__source=ResearchRun.Source.MLRBENCH)
    if not papers.exists():
        stdout.write("MLR-Bench human reviews: the MLR-Bench papers are not imported; skipped\n")
        return
    if not Rubric.objects.filter(stage=Rubric.Stage.END_TO_END).exists():
        stdout.write("MLR-Bench human reviews: no end-to-end rubric loaded; skipped\n")
        return
    from review.io.importers import import_human_reviews

    import_human_reviews(csv_path, campaign_name=CAMPAIGN_NAME, stdout=stdout)
    labels = root / "human_eval" / "Hallucination Check.csv"
    if labels.is_file():
        from review.io.hallucination import import_hallucination_labels

        # The CSV does not say which backbone's paper MLR Agent's rows are: linked only to the one the
        # settings name (MLRBENCH_LABELS_BACKBONE); without it unlinked, and links made before stay.
        backbone = settings.MLRBENCH_LABELS_BACKBONE or None
        report = import_hallucination_labels(labels, backbone=backbone)
        hint = (
            ""
            if backbone
            else " (link them: MLRBENCH_LABELS_BACKBONE, or manage.py import_hallucination_labels CSV --backbone ...)"
        )
        stdout.write(f"{report.lines()[0]}{hint}\n")
