"""The agent's side of the sandbox: MLGym's tool set on top of one persistent sandbox shell.

File tools (open, goto, scroll, create, search_file, edit, insert) read and write files through
the session and keep the viewer state (open file, window) here, on the host: one file transfer
per call instead of a helper process per call. Shell commands run in the persistent shell, so
`cd` and variables carry over between steps.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmark.agent import lint
from benchmark.agent.memory import Memory
from benchmark.agent.parsing import command_name
from benchmark.agent.prompt import WINDOW
from sandbox import SandboxError

FILE_TOOLS = {"open", "goto", "scroll_up", "scroll_down", "create", "search_file", "edit", "insert"}
SEARCH_TOOLS = {"search_dir", "find_file"}
MEMORY_TOOLS = {"memory_write", "memory_read"}
LITERATURE_TOOLS = {"literature_search", "parse_pdf"}
EVAL_TOOLS = {"validate", "submit"}
ALL_TOOLS = FILE_TOOLS | SEARCH_TOOLS | MEMORY_TOOLS | LITERATURE_TOOLS | EVAL_TOOLS
MAX_SEARCH_FILES = 100
CWD_MARK = "__referee_cwd__="


class ToolError(Exception):
    """A tool was misused; the message is shown to the agent as the observation."""


@dataclass
class Observation:
    text: str
    kind: str  # shell | tool | validate | submit
    score: Any = None  # a ScoreResult for validate / submit
    done: bool = False
    duration: float = 0.0


@dataclass
class ToolState:
    working_dir: str
    open_file: str | None = None
    first_line: int = 1
    memory: Memory = field(default_factory=Memory)

    def as_dict(self) -> dict[str, str]:
        return {"open_file": self.open_file or "n/a", "working_dir": self.working_dir}


Evaluate = Callable[[str], Any]  # split ("dev" | "test") -> ScoreResult(metrics, primary, error, output)
Literature = Callable[[str, str], str]  # (tool, argument) -> text


class Environment:
    """Executes one action at a time and says what the agent sees."""

    def __init__(
        self,
        *,
        session: Any,
        evaluate: Evaluate,
        command_timeout: float = 1800,
        literature: Literature | None = None,
        baseline_scores: dict | None = None,
        memory: Memory | None = None,
    ) -> None:
        self.session = session
        self.evaluate = evaluate
        self.command_timeout = command_timeout
        self.literature = literature
        self.baseline_scores = baseline_scores or {}
        workdir = getattr(getattr(session, "spec", None), "workdir", "/workspace")
        self.state = ToolState(working_dir=workdir, memory=memory or Memory())

    @property
    def available_tools(self) -> set[str]:
        return ALL_TOOLS - (set() if self.literature else LITERATURE_TOOLS)

    # -- dispatch --------------------------------------------------------------------------
    def execute(self, action: str) -> Observation:
        name = command_name(action)
        started = time.perf_counter()
        try:
            if name in EVAL_TOOLS:
                # validate and submit run the evaluator in sandboxes of their own: their time counts.
                observation = self._evaluate(name)
                observation.duration = time.perf_counter() - started
                return observation
            if name in ALL_TOOLS:
                handler = getattr(self, f"_tool_{name}")
                text = handler(action)
                return Observation(text=text, kind="tool", duration=time.perf_counter() - started)
        except ToolError as exc:
            return Observation(text=str(exc), kind="tool", duration=time.perf_counter() - started)
        return self._shell(action)

    def _shell(self, action: str) -> Observation:
        # The working directory is printed after the command, in the same round trip, and cut
        # from the output: the prompt and relative paths follow `cd` without a second command.
        wrapped = f'{action.rstrip()}\n__referee_rc=$?; printf "\\n{CWD_MARK}%s\\n" "$PWD"; (exit $__referee_rc)'
        result = self.session.run(wrapped, timeout=self.command_timeout)
        text = result.output
        head, mark, tail = text.rpartition(f"\n{CWD_MARK}")
        if mark:
            text = head
            cwd = tail.strip()
            if cwd.startswith("/"):
                self.state.working_dir = cwd
        text = text.rstrip("\n")
        if result.timed_out:
            text += f"\n[the command was stopped after {self.command_timeout:g} seconds]"
        if result.oom:
            text += "\n[the command ran out of memory and was killed]"
        if result.interrupted:
            text += "\n[the command was stopped: the run was cancelled]"
        return Observation(text=text, kind="shell", duration=result.duration)

    # -- evaluation --------------------------------------------------------------------------
    def _evaluate(self, name: str) -> Observation:
        split = "dev" if name == "validate" else "test"
        result = self.evaluate(split)
        if result.error:
            text = f"Evaluation of your submission on the {split} split failed:\n{result.error}"
            if result.output:
                text += f"\n{result.output.strip()}"
        else:
            baseline = self.baseline_scores.get(split)
            if isinstance(baseline, dict):
                baseline = baseline.get("metrics", baseline)
            text = "Your code produced a valid submission artefact.\n"
            if baseline:
                text += f"Baseline Score: {json.dumps(baseline)}\n"
            text += f"Evaluation Score: {json.dumps(result.metrics)}"
        return Observation(text=text, kind=name, score=result, done=name == "submit")

    # -- files ----------------------------------------------------------------------------
    def _path(self, raw: str) -> str:
        return posixpath.normpath(posixpath.join(self.state.working_dir, raw))

    def _read(self, path: str) -> str:
        try:
            data = self.session.get_file(path)
        except SandboxError as exc:
            message = str(exc)
            if "Is a directory" in message:
                raise ToolError(
                    f"Error: {path} is a directory. You can only open files. Use cd or ls to navigate directories."
                ) from exc
            if "No such file" in message or "Not a directory" in message:
                raise ToolError(f"Error: File {path} not found") from exc
            raise ToolError(f"Error: cannot read {path}: {message}") from exc
        return data.decode("utf-8", errors="replace")

    def _window(self, path: str, text: str) -> str:
        lines = text.splitlines()
        total = len(lines)
        first = min(max(1, self.state.first_line), max(1, total))
        self.state.first_line = first
        last = min(total, first + WINDOW - 1)
        out = [f"[File: {path} ({total} lines total)]"]
        if first > 1:
            out.append(f"({first - 1} more lines above)")
        out += [f"{number}:{lines[number - 1]}" for number in range(first, last + 1)]
        if last < total:
            out.append(f"({total - last} more lines below)")
        return "\n".join(out)

    def _open_text(self) -> tuple[str, str]:
        if not self.state.open_file:
            raise ToolError("No file open. Use the open command first.")
        return self.state.open_file, self._read(self.state.open_file)

    def _args(self, action: str) -> list[str]:
        first_line = action.strip().split("\n", 1)[0]
        try:
            return shlex.split(first_line)[1:]
        except ValueError as exc:
            raise ToolError(f"Error: cannot parse the arguments ({exc})") from exc

    def _tool_open(self, action: str) -> str:
        args = self._args(action)
        if not args:
            raise ToolError('Usage: open "<path>" [<line_number>]')
        path = self._path(args[0])
        text = self._read(path)
        self.state.open_file = path
        self.state.first_line = 1
        if len(args) > 1:
            if not args[1].isdigit():
                raise ToolError("Usage: open <file> [<line_number>]\nError: <line_number> must be a number")
            self.state.first_line = max(1, int(args[1]) - WINDOW // 2)
        return self._window(path, text)

    def _tool_goto(self, action: str) -> str:
        args = self._args(action)
        if len(args) != 1 or not args[0].isdigit():
            raise ToolError("Usage: goto <line_number>")
        path, text = self._open_text()
        total = len(text.splitlines())
        if int(args[0]) > total:
            raise ToolError(f"Error: <line_number> must be less than or equal to {total}")
        self.state.first_line = max(1, int(args[0]) - WINDOW // 2)
        return self._window(path, text)

    def _tool_scroll_down(self, action: str) -> str:
        path, text = self._open_text()
        self.state.first_line += WINDOW
        return self._window(path, text)

    def _tool_scroll_up(self, action: str) -> str:
        path, text = self._open_text()
        self.state.first_line = max(1, self.state.first_line - WINDOW)
        return self._window(path, text)

    def _tool_create(self, action: str) -> str:
        args = self._args(action)
        if len(args) != 1:
            raise ToolError("Usage: create <filename>")
        path = self._path(args[0])
        exists = self.session.run(f"test -e {shlex.quote(path)} && echo yes").output.strip()
        if exists == "yes":
            raise ToolError(f"Error: File '{path}' already exists.")
        self.session.run(f"mkdir -p {shlex.quote(posixpath.dirname(path))}")
        self.session.put_file(path, b"")
        self.state.open_file = path
        self.state.first_line = 1
        return self._window(path, "")

    # -- search ---------------------------------------------------------------------------
    def _tool_search_file(self, action: str) -> str:
        args = self._args(action)
        if not args or len(args) > 2:
            raise ToolError("Usage: search_file <search_term> [<file>]")
        term = args[0]
        if len(args) == 2:
            path = self._path(args[1])
            text = self._read(path)
        else:
            path, text = self._open_text()
        hits = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if term in line]
        if not hits:
            return f'No matches found for "{term}" in {path}'
        body = "\n".join(f"Line {n}:{line}" for n, line in hits[:200])
        return f'Found {len(hits)} matches for "{term}" in {path}:\n{body}\nEnd of matches for "{term}" in {path}'

    def _tool_search_dir(self, action: str) -> str:
        args = self._args(action)
        if not args or len(args) > 2:
            raise ToolError("Usage: search_dir <search_term> [<dir>]")
        term = args[0]
        directory = self._path(args[1]) if len(args) == 2 else self.state.working_dir
        result = self.session.run(
            f"grep -rIc --exclude-dir=.git -F -- {shlex.quote(term)} {shlex.quote(directory)} | grep -v ':0$'",
            timeout=60,
        )
        rows = [line.rsplit(":", 1) for line in result.output.splitlines() if ":" in line]
        if not rows:
            return f'No matches found for "{term}" in {directory}'
        if len(rows) > MAX_SEARCH_FILES:
            raise ToolError(
                f'More than {MAX_SEARCH_FILES} files matched for "{term}" in {directory}. Please narrow your search.'
            )
        total = sum(int(count) for _, count in rows if count.isdigit())
        body = "\n".join(f"{path} ({count} matches)" for path, count in rows)
        return f'Found {total} matches for "{term}" in {directory}:\n{body}\nEnd of matches for "{term}" in {directory}'

    def _tool_find_file(self, action: str) -> str:
        args = self._args(action)
        if not args or len(args) > 2:
            raise ToolError("Usage: find_file <file_name> [<dir>]")
        directory = self._path(args[1]) if len(args) == 2 else self.state.working_dir
        result = self.session.run(
            f"find {shlex.quote(directory)} -name {shlex.quote(args[0])} -not -path '*/.git/*'", timeout=60
        )
        found = [line for line in result.output.splitlines() if line.strip()]
        if not found:
            return f'No matches found for "{args[0]}" in {directory}'
        body = "\n".join(found[:200])
        return f'Found {len(found)} matches for "{args[0]}" in {directory}:\n{body}'

    # -- editing --------------------------------------------------------------------------
    def _body(self, action: str, marker: str) -> tuple[str, str]:
        head, _, rest = action.strip("\n").partition("\n")
        lines = rest.split("\n")
        if marker not in (line.strip() for line in lines):
            raise ToolError(f"Error: the text must end with a line holding only {marker}")
        body_lines = lines[: [line.strip() for line in lines].index(marker)]
        return head, "\n".join(body_lines)

    def _tool_edit(self, action: str) -> str:
        head, body = self._body(action, "end_of_edit")
        match = re.fullmatch(r"edit\s+(\d+):(\d+)\s*", head)
        if not match:
            raise ToolError("Usage: edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit")
        start, end = int(match.group(1)), int(match.group(2))
        path, text = self._open_text()
        lines = text.splitlines()
        if start < 1 or end < start - 1 or start > len(lines) + 1:
            raise ToolError(f"Error: lines {start}:{end} are outside the file's {len(lines)} lines")
        new_lines = lines[: start - 1] + (body.split("\n") if body else []) + lines[end:]
        return self._apply(path, text, new_lines, focus=start)

    def _tool_insert(self, action: str) -> str:
        head, body = self._body(action, "end_of_insert")
        match = re.fullmatch(r"insert\s+(\d+)\s*", head)
        if not match:
            raise ToolError("Usage: insert <line_number>\n<text_to_add>\nend_of_insert")
        after = int(match.group(1))
        path, text = self._open_text()
        lines = text.splitlines()
        if after > len(lines):
            raise ToolError(f"Error: line {after} is past the end of the file ({len(lines)} lines)")
        new_lines = lines[:after] + body.split("\n") + lines[after:]
        return self._apply(path, text, new_lines, focus=after + 1)

    def _apply(self, path: str, before: str, new_lines: list[str], *, focus: int) -> str:
        after = "\n".join(new_lines) + ("\n" if new_lines else "")
        if path.endswith(".py"):
            introduced = lint.new_errors(before, after)
            if introduced:
                saved = self.state.first_line
                self.state.first_line = max(1, focus - 5)
                proposed = self._window(path, after)
                self.state.first_line = max(1, focus - 5)
                original = self._window(path, before)
                self.state.first_line = saved
                errors = "\n".join(f"- line {line}: {text}" for line, text in introduced)
                rule = "-" * 49
                raise ToolError(
                    "Your proposed edit has introduced new syntax error(s). Please read this error message"
                    " carefully and then retry editing the file.\n"
                    f"ERRORS:\n{errors}\n"
                    f"This is how your edit would have looked if applied\n{rule}\n{proposed}\n{rule}\n"
                    f"This is the original code before your edit\n{rule}\n{original}\n{rule}\n"
                    "Your changes have NOT been applied. Please fix your edit command and try again."
                )
        self.session.put_file(path, after.encode())
        self.state.first_line = max(1, focus - WINDOW // 2)
        return self._window(path, after) + (
            "\nFile updated. Please review the changes and make sure they are correct"
            " (correct indentation, no duplicate lines, etc). Edit the file again if necessary."
        )

    # -- memory and literature ----------------------------------------------------------------
    def _argument(self, action: str) -> str:
        parts = action.strip().split(maxsplit=1)
        return parts[1].strip() if len(parts) > 1 else ""

    def _tool_memory_write(self, action: str) -> str:
        text = self._argument(action)
        if not text:
            raise ToolError("Usage: memory_write <text>")
        count = self.state.memory.write(text)
        return f"Saved to memory ({count} notes)."

    def _tool_memory_read(self, action: str) -> str:
        query = self._argument(action)
        if not query:
            raise ToolError("Usage: memory_read <query>")
        hits = self.state.memory.read(query)
        if not hits:
            return "No relevant notes in memory."
        return "\n".join(f"[{score}] {note}" for score, note in hits)

    def _literature(self, tool: str, action: str) -> str:
        if self.literature is None:
            raise ToolError(f"{tool} is not available in this session: no literature provider is configured.")
        argument = self._argument(action)
        if not argument:
            raise ToolError(f"Usage: {tool} <argument>")
        return self.literature(tool, argument)

    def _tool_literature_search(self, action: str) -> str:
        return self._literature("literature_search", action)

    def _tool_parse_pdf(self, action: str) -> str:
        return self._literature("parse_pdf", action)
