"""What supplementary files a reviewer may open: an allow-list of kinds, never a deny-list.

A stored file of an item (its own, or its run's experiment stage) is shown only when it is one of
the kinds named in KINDS: the experiment's code, its results folder, the coding agent's trace and
the run's logs. Anything else that a release put beside the paper (token counters, the pipeline's
bookkeeping, an LLM judge's review or hallucination verdict) is not shown, whatever it is called.

Judge and review outputs are refused even inside an allowed kind: by a word in the path (review,
judge, judgment, hallucination, verdict, ...) or, for JSON, by the shape of what is inside (a
judge's scores with justifications, a hallucination verdict, a peer review's fields). Such a file
anchors the very labels a study compares with the judge (issue #30: the released o4-mini runs each
carry `review_hallucination_<judge>.json`, and no other system's runs do).

`file_kind` is the one decision: `blinding.supplementary_files` lists only what it allows, and the
serving view serves only what that list holds, so a guessed URL of any other file is a 404.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import PurePosixPath

from benchmark.research import files as artifact_files

KINDS = {
    "code": "code of the experiment",
    "results": "results of the experiment",
    "trace": "the coding agent's trace",
    "log": "a log of the run",
}
CODE_SUFFIXES = {".py", ".sh", ".ipynb", ".toml", ".cfg", ".yaml", ".yml", ".r", ".jl", ".c", ".cpp", ".h", ".js"}
RESULT_SUFFIXES = {".md", ".txt", ".log", ".csv", ".json", ".jsonl", ".tsv", ".yaml", ".yml"}
LOG_SUFFIXES = {".log", ".txt"}
# `<agent>_output.json`, `<agent>_trace.jsonl`: the coding agent's own trace (benchmark.research.coding_agents).
TRACE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.\-]*?_(?:output|trace)\.jsonl?$")
# A word of the path that says a judge or a reviewer wrote it (split at /, _, -, . and CamelCase).
JUDGE_WORDS = {
    "review", "reviews", "reviewer", "reviewers", "judge", "judges", "judged", "judging", "judgment", "judgments",
    "judgement", "judgements", "hallucination", "hallucinations", "verdict", "verdicts", "critique", "critiques",
    "grading", "grader", "metareview", "llmjudge",
}  # fmt: skip
# Keys whose presence marks a JSON file as a judge's or a reviewer's output.
JUDGE_KEYS = {"has_hallucination", "hallucinations", "overall_assessment", "justification", "strengths", "weaknesses"}
REVIEW_FIELDS = {"clarity", "novelty", "soundness", "significance", "overall", "confidence", "decision", "rating"}
SNIFF_MAX = 2_000_000  # bytes of a JSON file read to look at its shape; a larger one is judged by its name


def _words(rel: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", rel)
    return [w for w in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if w]


def judge_named(rel: str) -> bool:
    return any(word in JUDGE_WORDS for word in _words(rel))


def _judge_shaped(data: object, depth: int = 0) -> bool:
    """A judge's or reviewer's output: its keys, or criteria each holding a score and its justification."""
    if depth > 3:
        return False
    if isinstance(data, list):
        return any(_judge_shaped(x, depth + 1) for x in data[:20])
    if not isinstance(data, dict):
        return False
    keys = {str(k).lower() for k in data}
    if keys & JUDGE_KEYS:
        return True
    if len(keys & REVIEW_FIELDS) >= 3:
        scored = [v for v in data.values() if isinstance(v, dict) and {"score", "justification"} <= set(v)]
        if scored or {"strengths", "weaknesses"} & keys or "decision" in keys:
            return True
    return any(_judge_shaped(v, depth + 1) for v in list(data.values())[:50])


@lru_cache(maxsize=4096)
def _sniff(artifact_code: str, rel: str, size: int) -> bool:
    """Whether a stored JSON file holds a judge's or reviewer's output (cached per file and size: a
    stored file is written once by its import; the size is there for a re-import that changed it)."""
    text = artifact_files.read_text(artifact_code, rel)
    if text is None:
        return False
    try:
        data = json.loads(text)
    except ValueError:
        lines = [line for line in text.splitlines()[:50] if line.strip()]
        try:
            return any(_judge_shaped(json.loads(line)) for line in lines)  # JSON lines
        except ValueError:
            return False
    return _judge_shaped(data)


def judge_content(artifact_code: str, rel: str) -> bool:
    if PurePosixPath(rel).suffix.lower() not in {".json", ".jsonl"}:
        return False
    size = artifact_files.stored_size(artifact_code, rel)
    if size is None or size > SNIFF_MAX:
        return False
    return _sniff(artifact_code, rel, size)


def path_kind(rel: str) -> str | None:
    """The allowed kind a path names (by place and suffix), or None: nothing else is ever shown."""
    path = PurePosixPath(rel)
    suffix = path.suffix.lower()
    if judge_named(rel):
        return None
    if path.parts and path.parts[0] == "results" and len(path.parts) > 1:
        return "results" if suffix in RESULT_SUFFIXES else None
    if len(path.parts) > 1 and suffix in CODE_SUFFIXES | RESULT_SUFFIXES:
        return "code"  # inside the coding agent's code folder (the importer keeps code and text files only)
    if len(path.parts) == 1:
        if TRACE_NAME.match(path.name):
            return "trace"
        if suffix in LOG_SUFFIXES:
            return "log"
        if suffix in CODE_SUFFIXES:
            return "code"
    return None


def why_withheld(artifact_code: str, rel: str) -> str:
    """Why a stored file is not shown ("" when it is): what the admin reads on the campaign page."""
    if path_kind(rel) is None:
        return "a judge's or reviewer's output (its name)" if judge_named(rel) else "not on the allow-list"
    if judge_content(artifact_code, rel):
        return "a judge's or reviewer's output (its content)"
    return ""


def file_kind(artifact_code: str, rel: str) -> str | None:
    """The kind of a stored file a reviewer may open, or None: not on the allow-list, or a judge's output."""
    kind = path_kind(rel)
    if kind is None or judge_content(artifact_code, rel):
        return None
    return kind
