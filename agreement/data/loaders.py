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

    items: dict[tuple[str, str], int] = {}

    def item_of(row: dict[str, str]) -> tuple[str, str]:
        key = (row["workshop_name"].strip(), row["model_name"].strip())
        return key

    l_scores: dict[int, np.ndarray] = {}
    for line, row in enumerate(l_rows, start=2):
        key = item_of(row)
        where = f"{llm_path.name}:{line}"
        if not all(key):
            faults.append(Fault("bad_value", where, "empty workshop_name/model_name: row skipped"))
            continue
        i = items.setdefault(key, len(items))
        if i in l_scores:
            faults.append(Fault("duplicate_judge_row", where, f"{key}: first row kept"))
            continue
        l_scores[i] = np.array([_parse(row.get(c), f"{where}:{c}", scale, faults) for c in criteria])
    h_item, h_rev, h_where, h_vals = [], [], [], []
    for line, row in enumerate(h_rows, start=2):
        key = item_of(row)
        where = f"{human_path.name}:{line}"
        reviewer = (row.get("reviewer_id") or "").strip()
        if not all(key) or not reviewer:
            faults.append(Fault("bad_value", where, "empty key column: row skipped"))
            continue
        h_item.append(items.setdefault(key, len(items)))
        h_rev.append(reviewer)
        h_where.append(where)
        h_vals.append([_parse(row.get(c), f"{where}:{c}", scale, faults) for c in criteria])

    if judge_reviews_dir is not None:
        judges, J, jf = load_judge_reviews(Path(judge_reviews_dir), items, criteria)
        faults += jf
        judge_is_mean = False
        # The released means must match the per-judge files; say so when they do not.
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
        human_item=np.asarray(h_item, dtype=np.int64),
        human_reviewer=np.asarray(h_rev, dtype=str),
        human_scores=np.asarray(h_vals, dtype=float).reshape(len(h_item), len(criteria)),
        human_where=tuple(h_where),
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
