"""Import MLR-Bench's released reviews of papers and experiments as judgments of the imported artifacts.

Layout (the MLR-Bench repository's, also ../shared/mlrbench), per judge and task:
    agent_reviews/subset_reviews_<judge>/<task>/review_<backbone>.json          end-to-end review of
        MLR-Agent's paper (end-to-end rubric; the judge was given the code)
    .../<task>/review_<backbone>_no_code.json                                   the same paper reviewed
        without the code: the paper's ablation, kept as its own condition: judgments with
        with_supplementary=False of a finished judge experiment per judge ("MLR-Bench ablation: <judge>
        without code", its gold set the ablation's papers), so panels, leaderboards and campaign
        agreement (which read `experiment IS NULL`) never mix them with the reviews made with code
    .../<task>/experiments/<coding agent>.json                                  experiment-stage review of
        the stepwise experiment (experiment rubric: hallucination flag, then scores)
    .../<task>/paper/<writing model>.json                                       writing-stage review of the
        model's paper written from those results (writing rubric)

Each file is validated against its stage's rubric, version 1. The release's own spellings are read as
the rubric's and the reading is recorded as a repair, while the stored reply stays the file's text:
`OverallAssessment` is the `overall` dimension, and the experiment review's
`Hallucination: {has_hallucination, details}` is the hallucination flag's score and justification.
A file that does not validate is kept as a failed judgment with its text and the error; a file with no
imported artifact to attach to, an artifact with no review, and a file or folder that is read by
nothing are reported. The stored source path is relative to the release root, so a re-import of the
same files from another clone changes nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from django.db import transaction
from django.utils import timezone

from benchmark.models import Artifact, ResearchRun
from benchmark.research.writeups import writeup_artifacts
from judge.experiments import gold_set_create
from judge.models import GoldSet, JudgeConfig, JudgeExperiment, Judgment, Rubric
from judge.parsing import ReplyError, reply_parse
from judge.rubrics import rubric_load_defaults

REVIEWS_DIR = "agent_reviews"
_SUBSET = re.compile(r"^subset_reviews_(?P<judge>.+)$")
_REVIEW = re.compile(r"^review_(?P<backbone>.+?)(?P<no_code>_no_code)?\.json$")
_STAGE_FILE = re.compile(r"^(?P<name>.+)\.json$")
_OVERALL = re.compile(r'"OverallAssessment"(\s*):')
# Sub-folders of a task's reviews: folder -> (rubric stage, artifact stage, the judge saw the code).
STAGE_DIRS = {
    "experiments": (Rubric.Stage.EXPERIMENT, Artifact.Stage.EXPERIMENT, True),
    "paper": (Rubric.Stage.WRITING, Artifact.Stage.PAPER, False),
}
# Provider prefixes for the released judges' labels; the label itself is kept exactly as released.
_PROVIDERS = (
    ("claude", "anthropic"),
    ("gemini", "google"),
    ("gpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
)


@dataclass
class ReviewImportReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    failed: int = 0  # files kept as failed judgments (malformed or invalid)
    per_stage: dict[str, int] = field(default_factory=dict)  # "end2end", "end2end without code", ... -> files
    problems: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.created + self.updated + self.unchanged

    def count(self, label: str) -> None:
        self.per_stage[label] = self.per_stage.get(label, 0) + 1


def judge_label(folder_judge: str) -> str:
    """'claude-3-7-sonnet-20250219' -> 'anthropic:claude-3-7-sonnet-20250219' (the released name, kept whole)."""
    lowered = folder_judge.lower()
    for prefix, provider in _PROVIDERS:
        if lowered.startswith(prefix):
            return f"{provider}:{folder_judge}"
    return f"unknown:{folder_judge}"


def released_reply(text: str) -> tuple[str, list[str]]:
    """The file's reply with MLR-Bench's spellings read as the rubric's keys, and what was read so.

    Text that is not a JSON object is returned as it is: the parser names its fault.
    """
    try:
        data = json.loads(text)
    except ValueError:  # the parser repairs or names the fault; the overall key is still read as released
        renamed, n = _OVERALL.subn(r'"overall"\1:', text, count=1)
        return renamed, ["read MLR-Bench's OverallAssessment as rubric key 'overall'"] if n else []
    if not isinstance(data, dict):
        return text, []
    notes = []
    if "OverallAssessment" in data and "Overall" not in data and "overall" not in data:
        data["overall"] = data.pop("OverallAssessment")
        notes.append("read MLR-Bench's OverallAssessment as rubric key 'overall'")
    flag = data.get("Hallucination")
    if isinstance(flag, dict) and "has_hallucination" in flag and "score" not in flag:
        data["Hallucination"] = {"score": flag["has_hallucination"], "justification": flag.get("details", "")}
        notes.append(
            "read MLR-Bench's Hallucination {has_hallucination, details} as the flag's score and justification"
        )
    return (json.dumps(data) if notes else text), notes


def _paper_index() -> dict[tuple[str, str], Artifact]:
    """(task slug, backbone) -> paper artifact of the imported MLR-Bench end-to-end runs."""
    papers = Artifact.objects.filter(
        stage=Artifact.Stage.PAPER,
        research_run__source=ResearchRun.Source.MLRBENCH,
        research_run__mode=ResearchRun.Mode.END_TO_END,
    ).select_related("research_run__task")
    index: dict[tuple[str, str], Artifact] = {}
    for paper in papers:
        run = paper.research_run
        slug = run.task.slug
        for key in {slug, slug.replace("-", "_")}:
            index[(key, run.backbone)] = paper
    return index


def rubric_v1(stage: str) -> Rubric:
    rubric = Rubric.objects.filter(stage=stage, version=1).first()
    if rubric is None:
        rubric_load_defaults()
        rubric = Rubric.objects.get(stage=stage, version=1)
    return rubric


def relative_source(path: Path, root: Path) -> str:
    """The file's path inside the release (the same from any clone), or the path as given when it is outside."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def store_judgment(
    *,
    artifact: Artifact,
    rubric: Rubric,
    judge_model: str,
    path: Path,
    root: Path,
    text: str,
    with_supplementary: bool,
    report: ReviewImportReport,
    experiment: JudgeExperiment | None = None,
) -> None:
    """Create, update or keep the imported judgment of (artifact, rubric, judge, condition) from a file's text."""
    adapted, notes = released_reply(text)
    try:
        parsed = reply_parse(adapted, rubric)
        values = {
            "status": Judgment.Status.SUCCEEDED,
            "scores": parsed.scores,
            "findings": parsed.findings,
            "repairs": [*parsed.repairs, *notes],
            "error": "",
        }
    except ReplyError as exc:
        values = {"status": Judgment.Status.FAILED, "scores": {}, "findings": [], "repairs": [], "error": str(exc)}
        report.failed += 1
        report.problems.append(f"{path}: kept as a failed judgment: {exc}")
    values.update(raw_reply=text, source_path=relative_source(path, root), temperature=0.0, attempts=1)
    key = {
        "artifact": artifact,
        "rubric": rubric,
        "judge_model": judge_model,
        "source": Judgment.Source.MLRBENCH,
        "with_supplementary": with_supplementary,  # with and without the code are two conditions, two judgments
        "experiment": experiment,
    }
    with transaction.atomic():
        existing = Judgment.objects.select_for_update().filter(**key).first()
        if existing is None:
            Judgment.objects.create(**key, finished_at=timezone.now(), **values)
            report.created += 1
            return
        if all(getattr(existing, name) == value for name, value in values.items()):
            report.unchanged += 1
            return
        for name, value in values.items():
            setattr(existing, name, value)
        existing.save()
        report.updated += 1


def _read(path: Path, report: ReviewImportReport) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        report.problems.append(f"{path}: unreadable: {exc}")
        return None


@dataclass
class _Indexes:
    papers: dict[tuple[str, str], Artifact]
    stages: dict[str, dict[tuple[str, str], list[Artifact]]]  # artifact stage -> (slug, name) -> artifacts
    rubrics: dict[str, Rubric]
    ablation: list[tuple[str, Artifact, Path, str]] = field(default_factory=list)  # (judge, paper, file, text)


ABLATION_GOLD_SET = "MLR-Bench ablation: papers reviewed without code"


def ablation_experiment(*, judge_model: str, rubric: Rubric, papers: list[Artifact]) -> JudgeExperiment:
    """The finished judge experiment that holds one judge's released no-code reviews (created once)."""
    ids = sorted({p.pk for p in papers})
    gold = next(
        (
            g
            for g in GoldSet.objects.filter(name__startswith=ABLATION_GOLD_SET)
            if sorted(g.artifacts.values_list("pk", flat=True)) == ids
        ),
        None,
    )  # a gold set is never edited: a release with other no-code reviews gets a new one
    if gold is None:
        taken = GoldSet.objects.filter(name__startswith=ABLATION_GOLD_SET).count()
        gold = gold_set_create(
            name=ABLATION_GOLD_SET + (f" ({taken + 1})" if taken else ""),
            stage=Artifact.Stage.PAPER,
            artifact_ids=ids,
            reference_label="MLR-Bench release, agent_reviews/subset_reviews_<judge>/<task>/review_<backbone>_no_code.json",
        )
    config, _ = JudgeConfig.objects.get_or_create(
        name=f"MLR-Bench ablation: {judge_model} without code",
        judge_model=judge_model,
        rubric=rubric,
        defaults={"with_supplementary": False, "temperature": 0.0},
    )
    experiment, _ = JudgeExperiment.objects.get_or_create(
        config=config,
        gold_set=gold,
        kind=JudgeExperiment.Kind.RATING,
        defaults={"repeats": 1, "status": JudgeExperiment.Status.FINISHED, "finished_at": timezone.now()},
    )
    return experiment


def import_mlr_reviews(root: Path | str, *, stdout: TextIO | None = None) -> ReviewImportReport:
    """Import every review file under root/agent_reviews/subset_reviews_<judge>/; report what could not be imported."""
    root = Path(root)
    report = ReviewImportReport()
    reviews = root / REVIEWS_DIR
    if not reviews.is_dir():
        report.problems.append(f"{reviews}: no such folder (expected agent_reviews/subset_reviews_<judge>/...)")
        return _finish(report, stdout)
    indexes = _Indexes(
        papers=_paper_index(),
        stages={artifact_stage: writeup_artifacts(artifact_stage) for _, artifact_stage, _ in STAGE_DIRS.values()},
        rubrics={
            stage: rubric_v1(stage) for stage in (Rubric.Stage.END_TO_END, *(s for s, _, _ in STAGE_DIRS.values()))
        },
    )
    if not indexes.papers:
        report.problems.append("no imported MLR-Bench papers to attach reviews to: run the results import first")
    judge_dirs = sorted(p for p in reviews.iterdir() if p.is_dir() and _SUBSET.match(p.name))
    if not judge_dirs:
        report.problems.append(f"{reviews}: no subset_reviews_<judge> folders")
    for judge_dir in judge_dirs:
        _import_judge(judge_dir=judge_dir, root=root, indexes=indexes, report=report)
    _import_ablation(root=root, indexes=indexes, report=report)
    return _finish(report, stdout)


def _import_ablation(*, root: Path, indexes: _Indexes, report: ReviewImportReport) -> None:
    rubric = indexes.rubrics[Rubric.Stage.END_TO_END]
    for judge_model in sorted({judge for judge, _, _, _ in indexes.ablation}):
        items = [(paper, path, text) for judge, paper, path, text in indexes.ablation if judge == judge_model]
        with transaction.atomic():
            experiment = ablation_experiment(judge_model=judge_model, rubric=rubric, papers=[p for p, _, _ in items])
        for paper, path, text in items:
            store_judgment(
                artifact=paper, rubric=rubric, judge_model=judge_model, path=path, root=root, text=text,
                with_supplementary=False, report=report, experiment=experiment,
            )  # fmt: skip


def _import_judge(*, judge_dir: Path, root: Path, indexes: _Indexes, report: ReviewImportReport) -> None:
    judge_model = judge_label(_SUBSET.match(judge_dir.name)["judge"])
    seen: dict[str, set[tuple[str, str]]] = {"end2end": set(), **{folder: set() for folder in STAGE_DIRS}}
    for entry in sorted(judge_dir.iterdir()):
        if not entry.is_dir():
            report.problems.append(f"{entry}: not a task folder; not read")
            continue
        for path in sorted(entry.iterdir()):
            if path.is_dir() and path.name in STAGE_DIRS:
                _import_stage_dir(
                    folder=path, task=entry.name, judge_model=judge_model, root=root, indexes=indexes,
                    seen=seen[path.name], report=report,
                )  # fmt: skip
                continue
            match = _REVIEW.match(path.name)
            if not match or not path.is_file():
                kind = "folder" if path.is_dir() else "file"
                report.problems.append(
                    f"{path}: a {kind} no importer reads (expected review_<backbone>[_no_code].json, "
                    f"{'/, '.join(STAGE_DIRS)}/); not read"
                )
                continue
            _import_end2end(
                path=path, task=entry.name, match=match, judge_model=judge_model, root=root, indexes=indexes,
                seen=seen["end2end"], report=report,
            )  # fmt: skip
    expected = {(a.research_run.task.slug.replace("-", "_"), a.research_run.backbone) for a in indexes.papers.values()}
    for task, backbone in sorted(expected - {(t.replace("-", "_"), b) for t, b in seen["end2end"]}):
        report.problems.append(
            f"{judge_dir}/{task}/review_{backbone}.json: missing (the paper has no review by this judge)"
        )
    for folder, (_, artifact_stage, _) in STAGE_DIRS.items():
        for task, name in sorted(set(indexes.stages[artifact_stage]) - seen[folder]):
            report.problems.append(f"{judge_dir}/{task}/{folder}/{name}.json: missing (no review by this judge)")


def _import_end2end(
    *, path: Path, task: str, match: re.Match, judge_model: str, root: Path, indexes: _Indexes,
    seen: set[tuple[str, str]], report: ReviewImportReport,
) -> None:  # fmt: skip
    """A review_<backbone>.json (with code) is stored now; a _no_code one is kept for the ablation's experiment."""
    with_code = not match["no_code"]
    key = (task, match["backbone"])
    if with_code:
        seen.add(key)
    artifact = indexes.papers.get(key)
    if artifact is None:
        report.problems.append(f"{path}: no imported paper for task {key[0]!r}, backbone {key[1]!r}; not imported")
        return
    text = _read(path, report)
    if text is None:
        return
    report.count("end2end" if with_code else "end2end without code")
    if not with_code:  # stored after every judge's folder is read: one experiment per judge holds them
        indexes.ablation.append((judge_model, artifact, path, text))
        return
    store_judgment(
        artifact=artifact, rubric=indexes.rubrics[Rubric.Stage.END_TO_END], judge_model=judge_model, path=path,
        root=root, text=text, with_supplementary=with_code, report=report,
    )  # fmt: skip


def _import_stage_dir(
    *, folder: Path, task: str, judge_model: str, root: Path, indexes: _Indexes, seen: set[tuple[str, str]],
    report: ReviewImportReport,
) -> None:  # fmt: skip
    rubric_stage, artifact_stage, with_code = STAGE_DIRS[folder.name]
    what = "coding agent" if folder.name == "experiments" else "writing model"
    for path in sorted(folder.iterdir()):
        match = _STAGE_FILE.match(path.name)
        if not match or not path.is_file():
            report.problems.append(f"{path}: not a <{what}>.json file; not read")
            continue
        key = (task, match["name"])
        seen.add(key)
        candidates = indexes.stages[artifact_stage].get(key, [])
        if len(candidates) != 1:
            reason = (
                f"no imported stepwise {artifact_stage} of {what} {key[1]!r} on {task!r} (import "
                "agent_results/experiments_and_writeups first)"
                if not candidates
                else f"{len(candidates)} imported {artifact_stage}s of {key[1]!r} on {task!r} (several coding "
                "agents' folders): the release does not say which one this review is of"
            )
            report.problems.append(f"{path}: {reason}; not imported")
            continue
        text = _read(path, report)
        if text is None:
            continue
        report.count(rubric_stage)
        store_judgment(
            artifact=candidates[0], rubric=indexes.rubrics[rubric_stage], judge_model=judge_model, path=path,
            root=root, text=text, with_supplementary=with_code, report=report,
        )  # fmt: skip


def _finish(report: ReviewImportReport, stdout: TextIO | None) -> ReviewImportReport:
    if stdout is not None:
        stages = ", ".join(f"{label} {n}" for label, n in sorted(report.per_stage.items()))
        stdout.write(
            f"reviews: {report.created} created, {report.updated} updated, {report.unchanged} unchanged "
            f"({stages or 'none read'}), {report.failed} kept as failed, {len(report.problems)} problem(s)\n"
        )
        for problem in report.problems:
            stdout.write(f"  ! {problem}\n")
    return report
