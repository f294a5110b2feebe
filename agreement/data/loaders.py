"""Read MLR-Bench's human_eval layout into an `AgreementData`.

human_review.csv: reviewer_id, model_name, workshop_name, <criterion>... (one row per review)
llm_judge.csv:    workshop_name, model_name, [model], <criterion>...  (the judges' mean per paper)
agent_reviews/subset_reviews_<judge>/<workshop>/review_<model>.json (optional): each judge's own
scores, `{<criterion>: {"score": n, ...}}`, which gives the per-judge view.

Bad cells become NaN plus a `Fault` naming file, line and column; only a missing file or a
missing key column, or a file that is not UTF-8 CSV, raises `LoadError` (one line: file, line).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from agreement.data.containers import AgreementData, Fault
from review.io.csvfile import CsvFileError, read_csv

KEY_COLUMNS = ("workshop_name", "model_name")
HUMAN_KEYS = ("reviewer_id", *KEY_COLUMNS)
# Columns that are identifiers or not quality criteria of the rubric (Confidence is 1-5 and
# describes the reviewer, not the paper).
NOT_CRITERIA = {"reviewer_id", "workshop_name", "model_name", "model", "confidence"}


class LoadError(ValueError):
    """The input cannot be read at all (missing file or key column)."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_csv(path: Path, required: tuple[str, ...]) -> tuple[list[str], list[dict[str, str]]]:
    try:
        return read_csv(path, required)
    except CsvFileError as exc:
        raise LoadError(str(exc)) from None


def _criteria_columns(header: list[str]) -> list[str]:
    return [h for h in header if h and h.lower() not in NOT_CRITERIA]


def _parse(value: str | None, where: str, scale: tuple[float, float], faults: list[Fault]) -> float:
    text = (value or "").strip()
    if text == "":
        faults.append(Fault("missing_score", where, "empty cell: treated as missing"))
        return np.nan
    try:
        x = float(text)
    except ValueError:
        faults.append(Fault("bad_value", where, f"{text!r} is not a number: treated as missing"))
        return np.nan
    if not np.isfinite(x) or not scale[0] <= x <= scale[1]:
        faults.append(
            Fault(
                "bad_value",
                where,
                f"{text} is outside the scale {scale[0]:g}-{scale[1]:g}: treated as missing",
            )
        )
        return np.nan
    return x


def load_judge_reviews(
    directory: Path, items: dict[tuple[str, str], int], criteria: tuple[str, ...]
) -> tuple[tuple[str, ...], np.ndarray, list[Fault]]:
    """Per-judge scores from MLR-Bench's agent_reviews/subset_reviews_<judge>/ folders."""
    faults: list[Fault] = []
    judge_dirs = sorted(p for p in directory.glob("subset_reviews_*") if p.is_dir())
    if not judge_dirs:
        raise LoadError(f"{directory}: no subset_reviews_<judge> folders")
    judges = tuple(p.name.removeprefix("subset_reviews_") for p in judge_dirs)
    J = np.full((len(items), len(judges), len(criteria)), np.nan)
    for k, jdir in enumerate(judge_dirs):
        for (workshop, model), i in items.items():
            path = jdir / workshop / f"review_{model}.json"
            if not path.is_file():
                faults.append(Fault("no_judge_score", str(path), "file missing"))
                continue
            try:
                obj = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8
                faults.append(Fault("bad_value", str(path), f"unreadable JSON: {exc}"))
                continue
            for c, crit in enumerate(criteria):
                entry = obj.get(crit) if isinstance(obj, dict) else None
                score = entry.get("score") if isinstance(entry, dict) else entry
                if isinstance(score, int | float) and not isinstance(score, bool):
                    J[i, k, c] = float(score)
                else:
                    faults.append(Fault("missing_score", f"{path}:{crit}", "no numeric score"))
    return judges, J, faults


def load_mlrbench(
    human_csv: str | Path,
    llm_csv: str | Path,
    *,
    judge_reviews_dir: str | Path | None = None,
    scale: tuple[float, float] = (1.0, 10.0),
    rubric_version: str = "",
    judge_models: tuple[str, ...] = (),
    prompt_hashes: tuple[str, ...] = (),
) -> AgreementData:
    human_path, llm_path = Path(human_csv), Path(llm_csv)
    h_header, h_rows = _read_csv(human_path, HUMAN_KEYS)
    l_header, l_rows = _read_csv(llm_path, KEY_COLUMNS)
    faults: list[Fault] = []
    criteria = _shared_criteria(human_path, h_header, llm_path, l_header, faults)
    # Items are numbered in the order they first appear, judge file first, then the human file.
    items: dict[tuple[str, str], int] = {}
    l_scores = _judge_file_scores(llm_path, l_rows, criteria, scale, items, faults)
    human = _human_scores(human_path, h_rows, criteria, scale, items, faults)
    if judge_reviews_dir is not None:
        judges, J = _per_judge_scores(Path(judge_reviews_dir), llm_path, l_scores, criteria, items, faults)
        judge_is_mean = False
    else:
        judges = ("judges_mean",)
        judge_is_mean = True
        J = np.full((len(items), 1, len(criteria)), np.nan)
        for i, row in l_scores.items():
            J[i, 0] = row

    sources = {str(human_path): _sha256(human_path), str(llm_path): _sha256(llm_path)}
    keys = list(items)
    return AgreementData(
        criteria=criteria,
        items=tuple(f"{w}/{m}" for w, m in keys),
        item_system=tuple(m for _, m in keys),
        human_item=np.asarray(human.item, dtype=np.int64),
        human_reviewer=np.asarray(human.reviewer, dtype=str),
        human_scores=np.asarray(human.values, dtype=float).reshape(len(human.item), len(criteria)),
        human_where=tuple(human.where),
        judges=judges,
        judge_scores=J,
        judge_is_mean=judge_is_mean,
        meta={
            "sources_sha256": sources,
            "rubric_version": rubric_version or "not given",
            "judge_models": list(judge_models) or list(judges),
            "prompt_hashes": list(prompt_hashes) or ["not given"],
            "scale": list(scale),
        },
        faults=faults,
    )


def _shared_criteria(
    human_path: Path, h_header: list[str], llm_path: Path, l_header: list[str], faults: list[Fault]
) -> tuple[str, ...]:
    """The criteria both files score, in the human file's order; a criterion only one file has is a
    fault, and none in common is a LoadError (there would be nothing to compare)."""
    h_crit, l_crit = _criteria_columns(h_header), _criteria_columns(l_header)
    criteria = tuple(c for c in h_crit if c in l_crit)
    for c in h_crit:
        if c not in l_crit:
            faults.append(Fault("unmatched_column", f"{human_path}:{c}", "not in judge file"))
    for c in l_crit:
        if c not in h_crit:
            faults.append(Fault("unmatched_column", f"{llm_path}:{c}", "not in human file"))
    if not criteria:
        raise LoadError(f"{human_path} and {llm_path} share no criterion column")
    return criteria


def _item_key(row: dict[str, str]) -> tuple[str, str]:
    return (row["workshop_name"].strip(), row["model_name"].strip())


def _judge_file_scores(
    llm_path: Path,
    rows: list[dict[str, str]],
    criteria: tuple[str, ...],
    scale: tuple[float, float],
    items: dict[tuple[str, str], int],
    faults: list[Fault],
) -> dict[int, np.ndarray]:
    """The judges' mean scores per item (numbering new items in `items`); of a repeated item the
    first row is kept."""
    scores: dict[int, np.ndarray] = {}
    for line, row in enumerate(rows, start=2):
        key = _item_key(row)
        where = f"{llm_path.name}:{line}"
        if not all(key):
            faults.append(Fault("bad_value", where, "empty workshop_name/model_name: row skipped"))
            continue
        i = items.setdefault(key, len(items))
        if i in scores:
            faults.append(Fault("duplicate_judge_row", where, f"{key}: first row kept"))
            continue
        scores[i] = np.array([_parse(row.get(c), f"{where}:{c}", scale, faults) for c in criteria])
    return scores


@dataclass
class _HumanScores:
    """One entry per usable review row: its item, reviewer, file:line and scores per criterion."""

    item: list[int] = field(default_factory=list)
    reviewer: list[str] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    values: list[list[float]] = field(default_factory=list)


def _human_scores(
    human_path: Path,
    rows: list[dict[str, str]],
    criteria: tuple[str, ...],
    scale: tuple[float, float],
    items: dict[tuple[str, str], int],
    faults: list[Fault],
) -> _HumanScores:
    human = _HumanScores()
    for line, row in enumerate(rows, start=2):
        key = _item_key(row)
        where = f"{human_path.name}:{line}"
        reviewer = (row.get("reviewer_id") or "").strip()
        if not all(key) or not reviewer:
            faults.append(Fault("bad_value", where, "empty key column: row skipped"))
            continue
        human.item.append(items.setdefault(key, len(items)))
        human.reviewer.append(reviewer)
        human.where.append(where)
        human.values.append([_parse(row.get(c), f"{where}:{c}", scale, faults) for c in criteria])
    return human


def _per_judge_scores(
    directory: Path,
    llm_path: Path,
    l_scores: dict[int, np.ndarray],
    criteria: tuple[str, ...],
    items: dict[tuple[str, str], int],
    faults: list[Fault],
) -> tuple[tuple[str, ...], np.ndarray]:
    """Each judge's own scores from its folder. The released means must match them; a fault says
    so for each item where they do not."""
    judges, J, jf = load_judge_reviews(directory, items, criteria)
    faults += jf
    for i, row in l_scores.items():
        mean = np.nanmean(J[i], axis=0) if not np.all(np.isnan(J[i])) else None
        if mean is not None and not np.allclose(mean, row, equal_nan=True):
            key = next(k for k, v in items.items() if v == i)
            faults.append(
                Fault(
                    "judge_mean_mismatch",
                    f"{llm_path.name}:{key}",
                    f"file mean {row.tolist()} != per-judge mean {mean.tolist()}",
                )
            )
    return judges, J
