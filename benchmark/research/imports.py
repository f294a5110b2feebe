"""Import the 30 released MLR-Bench end-to-end runs, every stage as an Artifact with its files.

Layout (the same in the released data folder and in a clone of the repository):
`agent_results/end2end_<backbone>/<task>/` with task.md, idea.md, related_work.md, proposal.md,
`<stage>_token_usage.json`, the coding agent's trace or log (claude_output.json: a JSON list
ending with a `role: system` item holding cost_usd; other agents: codex_log.log, ...), the agent's
code folder, and results/ (results.md, paper.md, log.txt, figures). The experiment's agent is
named from those files (coding_agents.py), or "unknown"; its cost is read where the data has one and
marked unpriced where it does not.

Idempotent: a run is found again by (source, task slug, backbone) and its artifacts by stage,
so their codes - and any judgments attached to them - survive a re-import. Faults of the data
(missing files, figures a paper cites but the run lacks, figures never cited, traces without
cost) are reported and kept on the artifacts, never silently dropped.
"""

from __future__ import annotations

import json
import posixpath
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

from django.db import transaction
from django.utils import timezone

from benchmark.models import Artifact, ResearchRun, Task
from benchmark.research.coding_agents import ExperimentAgent, experiment_agent, extra_folders, trace_format
from benchmark.research.files import (
    CODE_SUFFIXES,
    IMAGE_SUFFIXES,
    MAX_FILE_BYTES,
    TEXT_SUFFIXES,
    clean_relative,
    file_store,
)
from benchmark.research.tasks import import_mlr_tasks

ATTRIBUTION = "Released run from MLR-Bench (github.com/chchenhui/mlrbench), MIT License, Copyright (c) 2025 Hui Chen."
STEPWISE_HINT = (
    "{path} holds MLR-Bench's stepwise results (ideas and proposals per task and model, and the judges' reviews "
    "of them), not end-to-end runs: import them with `manage.py import_mlr_stepwise {root}`"
)
CODE_FILES_MAX = 500  # files kept from an agent's code folder; the rest are counted and reported
_RUN_DIR = re.compile(r"^end2end_(?P<backbone>.+)$")
_IMAGE_REF = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_MODEL_LINE = re.compile(r"\bmodel:\s*(\S+)")
_ARXIV = re.compile(r"arXiv[:\s]*(\d{4}\.\d{4,5})(v\d+)?", re.IGNORECASE)
STAGE_USAGE = {
    Artifact.Stage.IDEA: "idea_token_usage.json",
    Artifact.Stage.LITERATURE: "lit_token_usage.json",
    Artifact.Stage.PROPOSAL: "proposal_token_usage.json",
    Artifact.Stage.PAPER: "paper_token_usage.json",
}
STAGE_FILE = {
    Artifact.Stage.IDEA: "idea.md",
    Artifact.Stage.LITERATURE: "related_work.md",
    Artifact.Stage.PROPOSAL: "proposal.md",
}
STAGES = [s.value for s in Artifact.Stage]


@dataclass
class RunImportReport:
    created: int = 0
    updated: int = 0
    runs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    files: int = 0

    def lines(self) -> list[str]:
        out = [
            f"MLR-Bench runs: {len(self.runs)} imported ({self.created} new, {self.updated} updated), "
            f"{self.files} files stored, {len(self.errors)} errors, {len(self.faults)} data faults"
        ]
        out += [f"ERROR {e}" for e in self.errors]
        out += [f"FAULT {f}" for f in self.faults]
        return out


def results_root(path: str | Path) -> Path:
    root = Path(path)
    if (root / "agent_results").is_dir():
        return root / "agent_results"
    if _RUN_DIR.match(root.name) and root.is_dir():  # one end2end_<backbone>/ folder given directly
        return root.parent
    return root


def stepwise_hint(path: str | Path) -> str:
    """What to say when `path` holds the stepwise results instead of runs ('' when it does not)."""
    root = Path(path)
    for candidate, repo in (
        (root / "agent_results" / "ideas_and_proposals", root),
        (root / "ideas_and_proposals", root.parent),
        (root, root.parent.parent),
    ):
        if candidate.name == "ideas_and_proposals" and candidate.is_dir():
            return STEPWISE_HINT.format(path=path, root=repo)
    if root.name.startswith("idea_proposal_reviews_") or (root.name == "agent_reviews" and root.is_dir()):
        return STEPWISE_HINT.format(path=path, root=root.parent if root.name == "agent_reviews" else root.parent.parent)
    return ""


def find_imported_run(*, task_slug: str, backbone: str) -> ResearchRun | None:
    """The imported run of `backbone` ("claude", "gemini", "o4-mini") on a task; for the judgment import."""
    return (
        ResearchRun.objects.filter(source=ResearchRun.Source.MLRBENCH, task__slug=task_slug, backbone=backbone)
        .order_by("-created_at")
        .first()
    )


def _usage(path: Path) -> tuple[int, int, str]:
    """(tokens in, tokens out, problem) from an Anthropic- or OpenAI-shaped usage file.

    A count that is not a number is a problem named by file and field, and the stage's tokens
    stay 0 with that problem shown beside them (never a silent zero, never a crash).
    """
    if not path.is_file():
        return 0, 0, f"{path.name} missing"
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8
        return 0, 0, f"{path.name} unreadable ({exc})"
    if not isinstance(data, dict):
        return 0, 0, f"{path.name}: expected an object, got {type(data).__name__}"
    if "input_tokens" in data:
        fields_in, field_out = (
            ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"),
            "output_tokens",
        )
    elif "prompt_tokens" in data:
        fields_in, field_out = ("prompt_tokens",), "completion_tokens"
    else:
        return 0, 0, f"{path.name} has neither input_tokens nor prompt_tokens"
    counts = {}
    for name in (*fields_in, field_out):
        value = data.get(name) or 0
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return 0, 0, f"{path.name}: {name}: {json.dumps(value)[:40]} is not a token count (tokens unknown)"
        counts[name] = value
    return sum(counts[name] for name in fields_in), counts[field_out], ""


def _backbone_model(results: Path, backbone: str) -> str:
    log = results / f"end2end_{backbone}" / f"mlr_agent_{backbone}.log"
    if log.is_file():
        with log.open(errors="replace") as handle:
            for line in handle:
                match = _MODEL_LINE.search(line)
                if match:
                    return match.group(1)
    return ""


def parse_references(markdown: str) -> list[dict[str, Any]]:
    """The numbered "**Title**: ..." entries of a released related_work.md, with arXiv links."""
    refs: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for line in markdown.splitlines():
        title = re.match(r"^\s*\d+\.\s+\*\*Title\*\*:\s*(.+)$", line)
        if title:
            current = {"title": title.group(1).strip(), "authors": "", "year": "", "summary": "", "url": ""}
            arxiv = _ARXIV.search(current["title"])
            if arxiv:
                current["url"] = f"https://arxiv.org/abs/{arxiv.group(1)}"
                current["title"] = _ARXIV.sub("", current["title"]).replace("()", "").strip()
            refs.append(current)
            continue
        field_match = re.match(r"^\s*-\s+\*\*(Authors|Summary|Year)\*\*:\s*(.+)$", line)
        if field_match and current is not None:
            current[field_match.group(1).lower()] = field_match.group(2).strip()
    return refs


def summarise_trace(trace: Any) -> tuple[dict[str, Any], list[str]]:
    """Counts, tools used, model, cost and final message of a Claude Code trace; plus its faults."""
    faults: list[str] = []
    if not isinstance(trace, list):
        return {}, ["trace is not a JSON list"]
    tools: dict[str, int] = {}
    models: set[str] = set()
    tokens_in = tokens_out = assistant = 0
    final: dict[str, Any] = {}
    for item in trace:
        if not isinstance(item, dict):
            continue
        if item.get("role") == "system" and "cost_usd" in item:
            final = item
            continue
        if item.get("role") == "assistant" or item.get("type") == "message":
            assistant += 1
            if item.get("model"):
                models.add(str(item["model"]))
            usage = item.get("usage") or {}
            tokens_in += sum(
                int(usage.get(k) or 0)
                for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            )
            tokens_out += int(usage.get("output_tokens") or 0)
            for block in item.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    tools[str(block.get("name"))] = tools.get(str(block.get("name")), 0) + 1
    if not final:
        faults.append("trace has no final system item with cost_usd")
    summary = {
        "messages": len(trace),
        "assistant_messages": assistant,
        "tool_calls": sum(tools.values()),
        "tools": dict(sorted(tools.items(), key=lambda kv: -kv[1])),
        "models": sorted(models),
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "cost_usd": final.get("cost_usd"),
        "duration_s": round(final["duration_ms"] / 1000, 1)
        if isinstance(final.get("duration_ms"), int | float)
        else None,
        "num_turns": final.get("num_turns"),
        "result": str(final.get("result") or "")[:4000],
    }
    return summary, faults


def figure_relative(ref: str) -> str | None:
    """A paper's image reference (relative to results/paper.md) as a path inside results/, or None."""
    if ref.startswith(("http://", "https://", "data:", "/")):
        return None
    joined = posixpath.normpath(posixpath.join("results", ref))
    if not joined.startswith("results/"):
        return None
    return clean_relative(joined.removeprefix("results/"))


def _own_file(path: Path, root: Path) -> bool:
    """A regular file that is really inside `root`: a symlink (to /etc/shadow, another run) is never copied."""
    if not path.is_file() or path.is_symlink():
        return False
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def _read(path: Path, faults: list[str]) -> str:
    """The file's text; bytes that are not UTF-8 are shown as U+FFFD and named as a fault."""
    if not path.is_file():
        return ""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        faults.append(f"{path.name}:{line}: not UTF-8 (byte offset {exc.start}); undecodable bytes shown as \ufffd")
        return data.decode("utf-8", errors="replace")


def _upsert(run: ResearchRun, stage: str, **fields: Any) -> Artifact:
    artifact, _ = Artifact.objects.update_or_create(research_run=run, stage=stage, defaults=fields)
    return artifact


def import_mlr_runs(path: str | Path, *, stdout: TextIO | None = None) -> RunImportReport:
    """Import every `end2end_<backbone>/<task>/` run under `path`; returns the report (also written to stdout)."""
    report = RunImportReport()
    root = results_root(path)
    if not root.is_dir():
        report.errors.append(f"{root}: not a folder (give the MLR-Bench repository or its agent_results/ folder)")
        _write(report, stdout)
        return report
    backbones = sorted(d for d in root.iterdir() if d.is_dir() and _RUN_DIR.match(d.name))
    if not backbones:
        hint = stepwise_hint(path)
        report.errors.append(hint or f"{root}: no end2end_<backbone>/ folders: nothing to import")
    tasks_needed = root.parent / "tasks"
    if backbones and tasks_needed.is_dir() and not Task.objects.filter(kind=Task.Kind.MLR, is_current=True).exists():
        import_mlr_tasks(tasks_needed)  # the runs point at their tasks: make sure they exist
    for backbone_dir in backbones:
        backbone = _RUN_DIR.match(backbone_dir.name)["backbone"]  # type: ignore[index]
        model = _backbone_model(root, backbone)
        for run_dir in sorted(d for d in backbone_dir.iterdir() if d.is_dir()):
            where = f"{backbone_dir.name}/{run_dir.name}"
            if not (run_dir / "task.md").is_file() and not (run_dir / "idea.md").is_file():
                report.faults.append(f"{where}: not a run folder (no task.md, no idea.md); skipped")
                continue
            try:
                _import_run(run_dir=run_dir, backbone=backbone, model=model, where=where, report=report)
            except Exception as exc:  # one broken run never stops the others
                report.errors.append(f"{where}: not imported ({type(exc).__name__}: {exc})")
    _write(report, stdout)
    return report


def _write(report: RunImportReport, stdout: TextIO | None) -> None:
    out = stdout if stdout is not None else sys.stdout
    for line in report.lines():
        out.write(line + "\n")


def _import_run(*, run_dir: Path, backbone: str, model: str, where: str, report: RunImportReport) -> None:
    task = Task.objects.filter(slug=run_dir.name, kind=Task.Kind.MLR, is_current=True).first()
    if task is None:
        report.errors.append(f"{where}: task {run_dir.name} is not imported (run import_mlr_tasks first); skipped")
        return
    faults: list[str] = []
    released_task = _read(run_dir / "task.md", faults)
    if released_task and released_task.strip() != task.description.strip():
        faults.append("task.md differs from the released task file")
    agent = experiment_agent(run_dir)
    extra = extra_folders(run_dir, agent)
    if extra:
        faults.append(f"extra folders left by the agent: {', '.join(extra)}")
    with transaction.atomic():
        run = find_imported_run(task_slug=task.slug, backbone=backbone)
        settings = {"release_path": where, "model": model, "attribution": ATTRIBUTION}
        if run is None:
            run = ResearchRun.objects.create(
                task=task,
                source=ResearchRun.Source.MLRBENCH,
                backbone=backbone,
                mode=ResearchRun.Mode.END_TO_END,
                stages=STAGES,
                settings=settings,
                status=ResearchRun.Status.FINISHED,
                finished_at=timezone.now(),
            )
            report.created += 1
        else:
            report.updated += 1
        artifacts = _import_text_stages(run=run, run_dir=run_dir, faults=faults)
        artifacts.append(_import_experiment(run=run, run_dir=run_dir, agent=agent, faults=faults, report=report))
        artifacts.append(_import_paper(run=run, run_dir=run_dir, faults=faults, report=report))
        failed = [a.stage for a in artifacts if a.status == Artifact.Status.FAILED]
        unpriced = [a.stage for a in artifacts if not (a.data or {}).get("priced", False)]
        run.settings = {**settings, "faults": faults, "unpriced_stages": unpriced}
        run.tokens_sent = sum(a.tokens_sent for a in artifacts)
        run.tokens_received = sum(a.tokens_received for a in artifacts)
        run.cost = sum(a.cost for a in artifacts)
        run.status = ResearchRun.Status.FAILED if failed else ResearchRun.Status.FINISHED
        run.error = f"missing in the release: {', '.join(failed)}" if failed else ""
        run.save()
    report.runs.append(where)
    report.faults += [f"{where}: {f}" for f in faults]


def _import_text_stages(*, run: ResearchRun, run_dir: Path, faults: list[str]) -> list[Artifact]:
    artifacts = []
    for stage, name in STAGE_FILE.items():
        text = _read(run_dir / name, faults)
        tokens_in, tokens_out, problem = _usage(run_dir / STAGE_USAGE[stage])
        if problem:
            faults.append(f"{stage}: {problem}")
        data: dict[str, Any] = {"priced": False, "cost_note": "the release gives tokens, not prices"}
        if stage == Artifact.Stage.LITERATURE:
            data["references"] = parse_references(text)
            data["provider"] = "released (OpenAI search model)"
        artifacts.append(
            _upsert(
                run,
                stage,
                status=Artifact.Status.DONE if text else Artifact.Status.FAILED,
                content=text,
                data=data,
                files=[],
                tokens_sent=tokens_in,
                tokens_received=tokens_out,
                cost=0.0,
                error="" if text else f"{name} missing in the release",
            )
        )
        if not text:
            faults.append(f"{stage}: {name} missing")
    return artifacts


def _copy_tree(
    *, artifact: Artifact, folder: Path, report: RunImportReport, faults: list[str], skip: frozenset[str] = frozenset()
) -> list[str]:
    stored: list[str] = []
    for file in sorted(folder.rglob("*")):
        if not file.is_file():
            continue
        relative = file.relative_to(folder).as_posix()
        if relative in skip:
            continue  # another stage's file (a writing model's paper beside the results): stored there
        if not _own_file(file, folder):
            faults.append(f"experiment: results/{relative} is a link out of the run folder; not copied")
            continue
        suffix = file.suffix.lower()
        if suffix not in IMAGE_SUFFIXES | TEXT_SUFFIXES:
            continue  # code, checkpoints and binaries are not part of the release's results
        if file.stat().st_size > MAX_FILE_BYTES:
            faults.append(f"experiment: {relative} is larger than {MAX_FILE_BYTES // 2**20} MB; not copied")
            continue
        stored.append(file_store(artifact=artifact, relative=f"results/{relative}", source=file))
    report.files += len(stored)
    return stored


def _store_agent_files(
    *, artifact: Artifact, run_dir: Path, agent: ExperimentAgent, report: RunImportReport, faults: list[str]
) -> tuple[list[str], list[str]]:
    """(log and trace files, code files) of the coding agent, stored under the experiment artifact."""
    logs: list[str] = []
    for name in [*agent.trace_files, *agent.log_files]:
        source = run_dir / name
        if not _own_file(source, run_dir):
            faults.append(f"experiment: {name} is a link out of the run folder; not copied")
            continue
        if source.stat().st_size > MAX_FILE_BYTES:
            faults.append(f"experiment: {name} is larger than {MAX_FILE_BYTES // 2**20} MB; not copied")
            continue
        logs.append(file_store(artifact=artifact, relative=name, source=source))
    code: list[str] = []
    skipped = 0
    for folder in agent.code_dirs:
        for file in sorted((run_dir / folder).rglob("*")):
            if not file.is_file():
                continue
            if not _own_file(file, run_dir / folder):
                faults.append(
                    f"experiment: {file.relative_to(run_dir).as_posix()} is a link out of the run folder; not copied"
                )
                continue
            suffix = file.suffix.lower()
            if suffix not in CODE_SUFFIXES | TEXT_SUFFIXES or file.stat().st_size > MAX_FILE_BYTES:
                continue  # checkpoints, datasets and binaries are not evidence a reader can open
            if len(code) >= CODE_FILES_MAX:
                skipped += 1
                continue
            relative = f"{folder}/{file.relative_to(run_dir / folder).as_posix()}"
            stored = file_store(artifact=artifact, relative=relative, source=file)
            code.append(stored)
            if suffix in (".log", ".jsonl") or "log" in file.name.lower():
                logs.append(stored)  # a log the agent's code wrote is a log of the run too
    if skipped:
        faults.append(f"experiment: {skipped} more code files than the {CODE_FILES_MAX} kept; not copied")
    report.files += len(logs) + len([c for c in code if c not in logs])
    return logs, code


def _read_trace(
    *, artifact_dir_files: list[str], run_dir: Path, agent: ExperimentAgent, faults: list[str]
) -> tuple[dict[str, Any], str, str]:
    """(summary, trace format, trace file) of the first JSON trace that can be read."""
    for name in agent.trace_files:
        if name not in artifact_dir_files:
            continue
        try:
            trace = json.loads((run_dir / name).read_text(encoding="utf-8", errors="replace"))
        except ValueError as exc:
            faults.append(f"experiment: {name} is not valid JSON ({exc})")
            continue
        kind = trace_format(trace)
        if kind == "unrecognised JSON":
            faults.append(f"experiment: {name} is JSON of an unrecognised shape; stored, not summarised")
            return {}, kind, name
        summary, trace_faults = summarise_trace(trace)
        faults += [f"experiment: {f}" for f in trace_faults]
        return summary, kind, name
    return {}, "", ""


def _import_experiment(
    *,
    run: ResearchRun,
    run_dir: Path,
    agent: ExperimentAgent,
    faults: list[str],
    report: RunImportReport,
    skip: frozenset[str] = frozenset(),
) -> Artifact:
    results = run_dir / "results"
    artifact = _upsert(run, Artifact.Stage.EXPERIMENT)
    logs, code = _store_agent_files(artifact=artifact, run_dir=run_dir, agent=agent, report=report, faults=faults)
    summary, kind, trace_file = _read_trace(artifact_dir_files=logs, run_dir=run_dir, agent=agent, faults=faults)
    if not agent.trace_files and not agent.log_files:
        faults.append(
            "experiment: no trace or log of the coding agent (looked for <agent>_output.json, <agent>_log.log, *.log)"
        )
    elif not agent.trace_files:
        kind = "text log"
    if agent.key == "":
        faults.append("experiment: no file names the coding agent; shown as unknown")
    if agent.other_keys:
        faults.append(
            f"experiment: the run's files name several agents ({', '.join(agent.evidence)}); shown: {agent.name}"
        )
    files = [*logs, *[c for c in code if c not in logs]]
    if results.is_dir():
        files += _copy_tree(artifact=artifact, folder=results, report=report, faults=faults, skip=skip)
    results_md = _read(results / "results.md", faults)
    result_logs = [f for f in files if f.startswith("results/") and PurePosixPath(f).suffix.lower() == ".log"]
    logs += [f for f in ("results/log.txt", "results/experiment.log", "results/run_log.txt") if f in files]
    logs += [f for f in result_logs if f not in logs]
    if "results/log.txt" not in files:
        other = [f for f in logs if f.startswith("results/")]
        faults.append("experiment: results/log.txt missing" + (f" (other logs: {', '.join(other)})" if other else ""))
    if not results_md:
        faults.append("experiment: results/results.md missing")
    model = ", ".join(summary.get("models") or [])
    priced = summary.get("cost_usd") is not None
    artifact.status = Artifact.Status.DONE if results_md else Artifact.Status.FAILED
    artifact.content = results_md
    artifact.files = files
    artifact.data = {
        "trace": summary,
        "trace_file": trace_file,
        "logs": list(dict.fromkeys(logs)),
        "code_files": code,
        "figures": [f for f in files if PurePosixPath(f).suffix.lower() in IMAGE_SUFFIXES],
        "agent": agent.as_data(model=model, trace_format=kind),
        "priced": priced,
        "cost_note": "" if priced else f"unpriced: the data holds no cost for this run's agent ({agent.name})",
    }
    artifact.tokens_sent = int(summary.get("tokens_in") or 0)
    artifact.tokens_received = int(summary.get("tokens_out") or 0)
    artifact.cost = float(summary.get("cost_usd") or 0.0)
    artifact.error = "" if results_md else "results/results.md missing in the release"
    artifact.save()
    return artifact


def _import_paper(
    *,
    run: ResearchRun,
    run_dir: Path,
    faults: list[str],
    report: RunImportReport,
    name: str = "paper.md",
    usage: str | None = STAGE_USAGE[Artifact.Stage.PAPER],
) -> Artifact:
    """The paper results/<name> with the figures it cites; `usage` None: the release has no token file for it."""
    results = run_dir / "results"
    paper = _read(results / name, faults)
    tokens_in = tokens_out = 0
    if usage is not None:
        tokens_in, tokens_out, problem = _usage(run_dir / usage)
        if problem:
            faults.append(f"paper: {problem}")
    artifact = _upsert(run, Artifact.Stage.PAPER)
    files: list[str] = []
    missing: list[str] = []
    figure_map: dict[str, str] = {}
    for ref in dict.fromkeys(_IMAGE_REF.findall(paper)):
        relative = figure_relative(ref)
        source = run_dir / "results" / relative if relative else None
        if source is None or not _own_file(source, run_dir) or source.stat().st_size > MAX_FILE_BYTES:
            missing.append(ref)
            continue
        figure_map[ref] = file_store(artifact=artifact, relative=relative, source=source)
        files.append(figure_map[ref])
    report.files += len(files)
    all_figures = (
        {f.relative_to(results).as_posix() for f in results.rglob("*") if f.suffix.lower() in IMAGE_SUFFIXES}
        if results.is_dir()
        else set()
    )
    uncited = sorted(all_figures - set(files))  # figures of the run that this paper does not embed
    files = list(dict.fromkeys(files))
    if missing:
        faults.append(f"paper: cites figures the run does not have: {', '.join(missing)}")
    if all_figures and not files:
        faults.append(f"paper: embeds none of the run's {len(all_figures)} figures")
    elif uncited:
        faults.append(f"paper: {len(uncited)} of the run's figures are not cited")
    if not paper:
        faults.append(f"paper: results/{name} missing")
    artifact.status = Artifact.Status.DONE if paper else Artifact.Status.FAILED
    artifact.content = paper
    artifact.files = files
    artifact.data = {
        "figures": files,
        "figure_map": figure_map,
        "missing_figures": missing,
        "uncited_figures": uncited,
        "priced": False,
        "cost_note": "the release gives tokens, not prices",
    }
    artifact.tokens_sent, artifact.tokens_received, artifact.cost = tokens_in, tokens_out, 0.0
    artifact.error = "" if paper else f"results/{name} missing in the release"
    artifact.save()
    return artifact
