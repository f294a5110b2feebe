"""flake8's checks for the edit tool (pyflakes + pycodestyle, run in-process: no process per edit).

The codes are MLGym's: syntax errors (E999), undefined names (F821, F822), duplicate arguments
(F831) and indentation errors (E111, E112, E113). Only errors an edit *introduces* reject it.
"""

from __future__ import annotations

from collections import Counter

import pycodestyle
from pyflakes import api as pyflakes_api
from pyflakes import messages as pyflakes_messages

SELECT = ("E111", "E112", "E113", "E999", "F821", "F822", "F831")
_PYFLAKES_CODES = {
    pyflakes_messages.UndefinedName: "F821",
    pyflakes_messages.UndefinedExport: "F822",
    pyflakes_messages.DuplicateArgument: "F831",
}


class _FlakesReporter:
    def __init__(self) -> None:
        self.found: list[tuple[int, str]] = []

    def unexpectedError(self, filename: str, msg: str) -> None:  # noqa: N802 - pyflakes' interface
        self.found.append((1, f"E902 {msg}"))

    def syntaxError(self, filename: str, msg: str, lineno: int, offset: int, text: str) -> None:  # noqa: N802
        self.found.append((lineno or 1, f"E999 SyntaxError: {msg}"))

    def flake(self, message: pyflakes_messages.Message) -> None:
        code = _PYFLAKES_CODES.get(type(message))
        if code:
            self.found.append((message.lineno, f"{code} {message.message % message.message_args}"))


class _StyleReport(pycodestyle.BaseReport):
    def __init__(self, options: object) -> None:
        super().__init__(options)
        self.found: list[tuple[int, str]] = []

    def error(self, line_number: int, offset: int, text: str, check: object) -> str | None:
        code = text[:4]
        if code in SELECT:
            self.found.append((line_number, text))
        return code


def lint(source: str) -> list[tuple[int, str]]:
    """(line, "CODE message") pairs for the selected codes, sorted by line."""
    reporter = _FlakesReporter()
    pyflakes_api.check(source, "edited.py", reporter)
    found = list(reporter.found)
    if not any(text.startswith("E999") for _, text in found):
        style = pycodestyle.StyleGuide(select=["E111", "E112", "E113"], quiet=True, reporter=_StyleReport)
        checker = pycodestyle.Checker(lines=source.splitlines(keepends=True), options=style.options)
        checker.check_all()
        found += checker.report.found
    return sorted(found)


def new_errors(before: str, after: str) -> list[tuple[int, str]]:
    """Errors of `after` not already present in `before`, compared by message (lines shift on edits)."""
    old = Counter(text for _, text in lint(before))
    introduced = []
    for line, text in lint(after):
        if old[text] > 0:
            old[text] -= 1
        else:
            introduced.append((line, text))
    return introduced
