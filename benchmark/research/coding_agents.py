"""Which coding agent carried out an imported run's experiment stage, named from the run folder itself.

MLR-Agent hands the experiment stage to a coding agent (the released runs used Claude Code; the
upstream repository also has runs by other agents in the same layout). Nothing in the layout
names the agent except its own files, so the name is read from them, in this order of trust:

1. a trace file `<agent>_output.json` / `<agent>_trace.json(l)` (`claude_output.json`);
2. a log file `<agent>_log.log` / `<agent>_log.txt` / `<agent>.log` (`codex_log.log`, `gemini_log.log`);
3. the agent's code folder `<agent>_code/` (`claude_code/`), or a folder named after a known agent
   (`codex/`).

`mlr_agent_<backbone>.log` is MLR-Agent's own pipeline log, not the coding agent's. With no such
file the agent is "unknown" - never assumed. Evidence that names several agents is kept and
reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Labels of coding agents seen in MLR-style run folders; an unlisted name is shown as found.
KNOWN_AGENTS = {
    "claude": "Claude Code",
    "codex": "Codex CLI",
    "gemini": "Gemini CLI",
    "aider": "Aider",
    "openhands": "OpenHands",
    "cursor": "Cursor",
    "qwen": "Qwen Code",
}
UNKNOWN = "unknown"
# Files and folders of the pipeline itself, never the coding agent's.
STAGE_FILES = {"task.md", "idea.md", "related_work.md", "proposal.md"}
RESULT_DIRS = {"results"}
_NAME = r"(?P<agent>[A-Za-z0-9][A-Za-z0-9.\-]*?)"
TRACE_FILE = re.compile(rf"^{_NAME}_(?:output|trace)\.jsonl?$")
LOG_FILE = re.compile(rf"^{_NAME}_(?:log|output|trace)\.(?:log|txt)$")
BARE_LOG = re.compile(rf"^{_NAME}\.log$")  # names an agent only when it is a known one (`codex.log`)
LOG_SUFFIXES = {".log", ".txt", ".json", ".jsonl"}
CODE_DIR = re.compile(rf"^{_NAME}_code$")
PIPELINE_LOG = re.compile(r"^mlr_agent", re.IGNORECASE)
USAGE_FILE = re.compile(r"_token_usage\.json$")


@dataclass
class ExperimentAgent:
    """The coding agent of one run folder and the files that say so."""

    key: str = ""  # "claude", "codex", "foo"; "" when nothing names it
    evidence: list[str] = field(default_factory=list)  # "claude_output.json (trace)", ...
    trace_files: list[str] = field(default_factory=list)  # top-level structured traces
    log_files: list[str] = field(default_factory=list)  # top-level logs of the agent
    code_dirs: list[str] = field(default_factory=list)  # the agent's code folders
    other_keys: list[str] = field(default_factory=list)  # other agents the evidence names

    @property
    def name(self) -> str:
        if not self.key:
            return UNKNOWN
        return KNOWN_AGENTS.get(self.key.lower(), self.key)

    def as_data(self, *, model: str = "", trace_format: str = "") -> dict[str, Any]:
        return {
            "name": self.name,
            "key": self.key,
            "known": self.key.lower() in KNOWN_AGENTS,
            "model": model,
            "trace_format": trace_format,
            "evidence": self.evidence,
            "other_agents": [KNOWN_AGENTS.get(k.lower(), k) for k in self.other_keys],
        }


def _agent_of(name: str) -> str:
    return name.lower()


def experiment_agent(run_dir: Path) -> ExperimentAgent:
    """Name the coding agent of `run_dir` from its trace, log and code folder names."""
    found = ExperimentAgent()
    traces: list[str] = []
    logs: list[str] = []
    codes: list[str] = []
    files = sorted(p for p in run_dir.iterdir() if p.is_file())
    dirs = sorted(p for p in run_dir.iterdir() if p.is_dir())
    for path in files:
        if path.name in STAGE_FILES or USAGE_FILE.search(path.name) or PIPELINE_LOG.match(path.name):
            continue
        trace = TRACE_FILE.match(path.name)
        if trace:
            found.trace_files.append(path.name)
            found.evidence.append(f"{path.name} (trace)")
            traces.append(_agent_of(trace["agent"]))
            continue
        log = LOG_FILE.match(path.name) or BARE_LOG.match(path.name)
        if log and (log.re is LOG_FILE or log["agent"].lower() in KNOWN_AGENTS):
            found.log_files.append(path.name)
            found.evidence.append(f"{path.name} (log)")
            logs.append(_agent_of(log["agent"]))
        elif path.suffix.lower() in LOG_SUFFIXES:
            found.log_files.append(path.name)  # a log of the run that names no agent: stored all the same
    for path in dirs:
        code = CODE_DIR.match(path.name)
        key = _agent_of(code["agent"]) if code else (path.name.lower() if path.name.lower() in KNOWN_AGENTS else "")
        if key:
            found.code_dirs.append(path.name)
            found.evidence.append(f"{path.name}/ (code folder)")
            codes.append(key)
    distinct = list(dict.fromkeys(traces + logs + codes))
    if distinct:
        found.key = distinct[0]
        found.other_keys = distinct[1:]
    return found


def extra_folders(run_dir: Path, agent: ExperimentAgent) -> list[str]:
    """Folders that are neither results nor the agent's code (backups, scratch): reported, not imported."""
    known = RESULT_DIRS | set(agent.code_dirs)
    return sorted(d.name for d in run_dir.iterdir() if d.is_dir() and d.name not in known)


def trace_format(trace: Any) -> str:
    """What a parsed JSON trace is: Claude Code's message list, another chat list, or unknown."""
    if not isinstance(trace, list) or not trace:
        return "unrecognised JSON"
    items = [i for i in trace if isinstance(i, dict)]
    if any(i.get("type") == "message" and str(i.get("model", "")).startswith("claude") for i in items):
        return "Claude Code message list"
    if any("role" in i for i in items):
        return "chat message list"
    return "unrecognised JSON"
