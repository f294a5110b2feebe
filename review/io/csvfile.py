"""Reading an uploaded or released CSV file: every failure is one line naming the file and line.

Pure Python (no Django): the agreement file suite uses it outside the app too.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path


class CsvFileError(ValueError):
    """The file cannot be read at all: missing, not UTF-8, not CSV, or without a key column."""


def read_csv(path: Path, required: tuple[str, ...]) -> tuple[list[str], list[dict[str, str]]]:
    """(header, rows) of a UTF-8 CSV file (a BOM is fine); CsvFileError otherwise."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CsvFileError(f"{path}: file not found") from None
    except OSError as exc:
        raise CsvFileError(f"{path}: file: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise CsvFileError(
            f"{path}:{line}: file: not UTF-8 (byte offset {exc.start}: 0x{data[exc.start]:02x}); save it as UTF-8"
        ) from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows: list[dict[str, str]] = []
    done = 0  # the last line of the last row read: a failing row starts after it
    try:
        header = [h.strip() for h in reader.fieldnames or []]
        reader.fieldnames = header
        done = reader.line_num
        for row in reader:
            rows.append(row)
            done = reader.line_num
    except csv.Error as exc:
        raise CsvFileError(f"{path}:{done + 1}: file: not readable as CSV ({exc})") from None
    missing = [c for c in required if c not in header]
    if missing:
        raise CsvFileError(f"{path}:1: header: missing column(s) {', '.join(missing)}")
    return header, rows
