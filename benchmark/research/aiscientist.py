"""Import the AI Scientist v2 papers that MLR-Bench released beside its own (ai_scientist_v2_papers/).

Layout: ai_scientist_v2_papers/<backbone>/<task>/ with the paper as a PDF (`<task>.pdf`), its
experiments (`experiments/`: idea.md, *_summary.json, best_solution_*.py), `token_tracker.json`
(per model: tokens and "cost (USD)"), and the judges' reviews (review_<judge>.json,
review_hallucination_<judge>.json, imported by judge.mlr_aiscientist). Each folder becomes a run of
source AI Scientist v2 with an idea, an experiment (the summaries and code as files) and a paper
artifact whose files are the PDF and the figures rendered from it, and whose text is the markdown
extracted from the PDF (text, tables, figure links; benchmark.research.pdf). A PDF without a text
layer keeps an empty text and says so; campaigns refuse such a paper (they could not blind it).

Idempotent: a run is found again by (source, task, backbone). Faults (a missing PDF or idea, an
unreadable token tracker, files and folders nothing reads) are reported by file and kept on the run.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from django.db import transaction
from django.utils import timezone

from benchmark.models import Artifact, ResearchRun, Task
from benchmark.research.files import MAX_FILE_BYTES, file_store
from benchmark.research.pdf import pdf_read

AI_SCIENTIST_DIR = "ai_scientist_v2_papers"
SYSTEM = "AI Scientist v2"
ATTRIBUTION = (
    "AI Scientist v2 paper as released with MLR-Bench (github.com/chchenhui/mlrbench), MIT License, "
    "Copyright (c) 2025 Hui Chen."
)
PDF_NOTE = "the paper is a PDF without a text layer: judges and search see no text, and no campaign can blind it"
PDF_READ_NOTE = (
    "the paper is a PDF: judges, the fabrication audit, search and reviewers read the text, tables and figures "
    "extracted from it (benchmark.research.pdf); the original PDF is for admins and researchers"
)
_REVIEW = re.compile(r"^review_(?:hallucination_)?.+\.json$")
_EXPERIMENT_FILE = re.compile(r"^(?:.+_summary\.json|best_solution_.+\.py|idea\.md)$")
STAGES = [Artifact.Stage.IDEA, Artifact.Stage.EXPERIMENT, Artifact.Stage.PAPER]


@dataclass
class AIScientistReport:
    runs: list[str] = field(default_factory=list)
    created: int = 0
    kept: int = 0  # found again (codes and judgments kept), their files stored again
    files: int = 0
    errors: list[str] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [
            f"AI Scientist v2 papers: {len(self.runs)} imported ({self.created} new, {self.kept} kept), "
            f"{self.files} files stored, {len(self.errors)} errors, {len(self.faults)} data faults"
        ]
        out += [f"ERROR {e}" for e in self.errors]
        out += [f"FAULT {f}" for f in self.faults]
        return out


def ai_scientist_root(path: str | Path) -> Path:
    root = Path(path)
    return root if root.name == AI_SCIENTIST_DIR else root / AI_SCIENTIST_DIR


def find_ai_scientist_papers() -> dict[tuple[str, str], Artifact]:
    """(task slug, backbone) -> the imported AI Scientist v2 paper, for the reviews' and labels' importers."""
    papers = Artifact.objects.filter(
        stage=Artifact.Stage.PAPER, research_run__source=ResearchRun.Source.AI_SCIENTIST
    ).select_related("research_run__task")
    return {(p.research_run.task.slug, p.research_run.backbone): p for p in papers}


def import_ai_scientist(path: str | Path, *, stdout: TextIO | None = None) -> AIScientistReport:
    """Import every `<backbone>/<task>/` folder under ai_scientist_v2_papers/; the report is also written to stdout."""
    report = AIScientistReport()
    root = ai_scientist_root(path)
    if not root.is_dir():
        report.errors.append(f"{path}: no {AI_SCIENTIST_DIR}/ folder")
        return _write(report, stdout)
    for backbone_dir in sorted(root.iterdir()):
        if not backbone_dir.is_dir():
            report.faults.append(f"{AI_SCIENTIST_DIR}/{backbone_dir.name}: not a backbone folder; not read")
            continue
        for run_dir in sorted(backbone_dir.iterdir()):
            where = f"{AI_SCIENTIST_DIR}/{backbone_dir.name}/{run_dir.name}"
            if not run_dir.is_dir():
                report.faults.append(f"{where}: not a task folder; not read")
                continue
            try:
                _import_run(run_dir=run_dir, backbone=backbone_dir.name, where=where, report=report)
            except Exception as exc:  # one broken folder never stops the others
                report.errors.append(f"{where}: not imported ({type(exc).__name__}: {exc})")
    return _write(report, stdout)


def _write(report: AIScientistReport, stdout: TextIO | None) -> AIScientistReport:
    out = stdout if stdout is not None else sys.stdout
    for line in report.lines():
        out.write(line + "\n")
    return report


def token_tracker(path: Path) -> tuple[int, int, float | None, str]:
    """(prompt tokens, completion tokens, cost in USD or None, fault) summed over the tracker's models."""
    if not path.is_file():
        return 0, 0, None, f"{path.name} missing: tokens and cost unknown"
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        return 0, 0, None, f"{path.name}: unreadable ({exc}): tokens and cost unknown"
    if not isinstance(data, dict):
        return 0, 0, None, f"{path.name}: expected an object per model, got {type(data).__name__}"
    sent = received = 0
    cost = 0.0
    for model, entry in data.items():
        tokens = entry.get("tokens") if isinstance(entry, dict) else None
        usd = entry.get("cost (USD)") if isinstance(entry, dict) else None
        numbers = [tokens.get("prompt"), tokens.get("completion"), usd] if isinstance(tokens, dict) else [None]
        if not all(isinstance(n, int | float) and not isinstance(n, bool) and n >= 0 for n in numbers):
            return 0, 0, None, f"{path.name}: {model}: no tokens.prompt, tokens.completion and cost (USD) numbers"
        sent, received, cost = sent + int(numbers[0]), received + int(numbers[1]), cost + float(numbers[2])
    return sent, received, cost, ""


def _store(artifact: Artifact, source: Path, relative: str, faults: list[str]) -> str | None:
    if source.is_symlink() or not source.is_file():
        faults.append(f"{relative}: not a regular file; not copied")
        return None
    if source.stat().st_size > MAX_FILE_BYTES:
        faults.append(f"{relative}: larger than {MAX_FILE_BYTES // 2**20} MB; not copied")
        return None
    return file_store(artifact=artifact, relative=relative, source=source)


def _upsert(run: ResearchRun, stage: str, **fields: Any) -> Artifact:
    artifact, _ = Artifact.objects.update_or_create(research_run=run, stage=stage, defaults=fields)
    return artifact


def _unread(run_dir: Path, pdf: str) -> list[str]:
    """Files and folders of a run folder that no importer reads."""
    known = {pdf, "token_tracker.json", "experiments"}
    out = [p.name + ("/" if p.is_dir() else "") for p in sorted(run_dir.iterdir()) if p.name not in known]
    out = [name for name in out if not _REVIEW.match(name)]
    experiments = run_dir / "experiments"
    if experiments.is_dir():
        out += [
            f"experiments/{p.name}{'/' if p.is_dir() else ''}"
            for p in sorted(experiments.iterdir())
            if p.is_dir() or not _EXPERIMENT_FILE.match(p.name)
        ]
    return out


def _import_run(*, run_dir: Path, backbone: str, where: str, report: AIScientistReport) -> None:
    task = Task.objects.filter(slug=run_dir.name, kind=Task.Kind.MLR, is_current=True).first()
    if task is None:
        report.errors.append(f"{where}: task {run_dir.name} is not imported (run import_mlr_tasks first); skipped")
        return
    faults: list[str] = []
    pdf = f"{run_dir.name}.pdf"
    unread = _unread(run_dir, pdf)
    if unread:
        faults.append(f"read by no importer: {', '.join(unread)}")
    sent, received, cost, problem = token_tracker(run_dir / "token_tracker.json")
    if problem:
        faults.append(problem)
    experiments = run_dir / "experiments"
    with transaction.atomic():
        run = _run_row(task=task, backbone=backbone, report=report)
        idea = _import_idea(run, experiments=experiments, faults=faults)
        experiment, stored = _import_experiment(run, experiments=experiments, backbone=backbone, faults=faults)
        paper, pdf_name = _import_paper(run, run_dir=run_dir, pdf=pdf, faults=faults)
        report.files += len(stored) + bool(pdf_name)
        failed = [a.stage for a in (idea, experiment, paper) if a.status == Artifact.Status.FAILED]
        run.settings = {
            "release_path": where,
            "system": SYSTEM,
            "model": backbone,
            "attribution": ATTRIBUTION,
            "faults": faults,
            "unpriced_stages": [] if cost is not None else STAGES,
        }
        run.tokens_sent, run.tokens_received, run.cost = sent, received, cost or 0.0
        run.status = ResearchRun.Status.FAILED if failed else ResearchRun.Status.FINISHED
        run.error = f"missing in the release: {', '.join(failed)}" if failed else ""
        run.save()
    report.runs.append(where)
    report.faults += [f"{where}: {f}" for f in faults]


def _run_row(*, task: Task, backbone: str, report: AIScientistReport) -> ResearchRun:
    """The run of this task and backbone: the one a previous import made (re-imports update it), or a new one."""
    run = ResearchRun.objects.filter(
        source=ResearchRun.Source.AI_SCIENTIST, task=task, backbone=backbone
    ).first() or ResearchRun(
        task=task,
        source=ResearchRun.Source.AI_SCIENTIST,
        backbone=backbone,
        mode=ResearchRun.Mode.END_TO_END,
        stages=STAGES,
        finished_at=timezone.now(),
    )  # fmt: skip
    if run.pk is None:
        run.save()
        report.created += 1
    else:
        report.kept += 1
    return run


def _import_idea(run: ResearchRun, *, experiments: Path, faults: list[str]) -> Artifact:
    """experiments/idea.md as the idea artifact; failed (not empty and done) when the release lacks it."""
    idea_text = (experiments / "idea.md").read_text(encoding="utf-8", errors="replace") if (
        experiments / "idea.md"
    ).is_file() else ""  # fmt: skip
    if not idea_text:
        faults.append("experiments/idea.md missing")
    return _upsert(
        run, Artifact.Stage.IDEA, content=idea_text, files=[], data={"priced": False},
        status=Artifact.Status.DONE if idea_text else Artifact.Status.FAILED,
        error="" if idea_text else "experiments/idea.md missing in the release",
    )  # fmt: skip


def _import_experiment(
    run: ResearchRun, *, experiments: Path, backbone: str, faults: list[str]
) -> tuple[Artifact, list[str]]:
    """The experiment artifact from experiments/'s files; returns it and the names stored."""
    experiment = _upsert(run, Artifact.Stage.EXPERIMENT)
    stored = []
    if experiments.is_dir():
        for source in sorted(p for p in experiments.iterdir() if p.is_file() and _EXPERIMENT_FILE.match(p.name)):
            name = _store(experiment, source, f"experiments/{source.name}", faults)
            if name:
                stored.append(name)
    else:
        faults.append("experiments/ missing")
    experiment.status = Artifact.Status.DONE if stored else Artifact.Status.FAILED
    experiment.files = stored
    experiment.data = {
        "summaries": [f for f in stored if f.endswith("_summary.json")],
        "code_files": [f for f in stored if f.endswith(".py")],
        "agent": {"name": SYSTEM, "key": "ai_scientist_v2", "model": backbone},
        "priced": False,
        "cost_note": "the release gives the whole run's cost only (on the run)",
    }
    experiment.error = "" if stored else "experiments/ missing in the release"
    experiment.save()
    return experiment, stored


def _import_paper(run: ResearchRun, *, run_dir: Path, pdf: str, faults: list[str]) -> tuple[Artifact, str | None]:
    """The paper artifact: the release's PDF, with its text layer and figures where they can be read;
    returns it and the stored PDF's name (None when the release has none)."""
    paper = _upsert(run, Artifact.Stage.PAPER)
    pdf_name = _store(paper, run_dir / pdf, pdf, faults) if (run_dir / pdf).is_file() else None
    if pdf_name is None and not (run_dir / pdf).is_file():
        faults.append(f"{pdf} missing")
    read = pdf_read(run_dir / pdf) if pdf_name else None
    figures = [file_store(artifact=paper, relative=name, data=png) for name, png in (read.figures if read else [])]
    if read is not None:
        faults.extend(read.problems)
    extracted = bool(read and read.text_layer)
    paper.status = Artifact.Status.DONE if pdf_name else Artifact.Status.FAILED
    paper.content = read.markdown if read else ""
    paper.files = [pdf_name, *figures] if pdf_name else []
    paper.data = {
        "pdf": pdf_name or "",
        "text_extracted": extracted,
        "extraction": read.summary() if read else {},
        "note": PDF_READ_NOTE if extracted else PDF_NOTE,
        "priced": False,
    }
    paper.error = "" if pdf_name else f"{pdf} missing in the release"
    paper.save()
    return paper, pdf_name
