"""Systematic tells: a feature that most items of one system carry and (almost) no other system's do.

Scrubbing names is not enough when one system's items look different: a file only its runs have
(`review_hallucination_[system].json` beside every o4-mini paper), a path style (MLGym's
`/home/agent/workspace`), a fixed line (a starter-code run's "Nothing left to do: submitting.",
MLGym's "(Current Step: N, Remaining Steps: N)"), a tool-output format (MLGym's
`[File: ... (N lines total)]`). A reviewer who learns the tell knows the system.

`campaign_check_tells` computes, per candidate feature, the share of each system's items carrying
it, keeps the tells (MOST of one system's items, at most ALMOST_NONE of every other system's), and
stores them on the campaign with what was done to each:

- a file or folder: hidden from the reviewers (`blinded.supplementary_files` leaves it out, so it
  is neither listed nor served); "never shown" when the allow-list already keeps it out;
- a fixed line (paper text, a step's thought, action or output) or a tool-output header: cut from
  the reviewers' copy;
- a path style: rewritten to the neutral WORKDIR;
- a step's action (a fixed line, its command word): nothing can hide it without hiding what the agent
  did: unresolved, and
  the campaign is not opened while one remains unless the admin accepts it (review.control.services).

Features are normalised before counting (system names scrubbed, digits as N, whitespace folded), so
"review_hallucination_claude-3-7-sonnet-20250219.json" and "..._gemini-2.5-pro-preview.json" are one
feature. The stored artifacts and steps never change; only the reviewers' copy does.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from django.utils import timezone

from benchmark.models import Artifact, Step
from review.blinding import scrubbing, supplementary

RULES_VERSION = 1  # bump when features or actions change: a stored check by older rules is stale
MOST = 0.6  # share of one system's items that makes a feature systematic
ALMOST_NONE = 0.1  # the most any other system's items may carry it
MIN_CARRYING = 3  # one or two items are items, not a system's habit
LINE_MIN = 20  # characters of a normalised line: shorter ones ("---", "## Results") are everywhere
WORKDIR = "<workdir>"

# Tool-output formats with a fixed shape: (key, regex of the whole line, shown to the admin).
FORMATS = {
    "file-header": (re.compile(r"^\[File: [^\n]*\(\d+ lines total\)\][ \t]*(?:\n|$)", re.MULTILINE), "[File: <path> (N lines total)]"),
    "current-step": (re.compile(r"^\(Current Step: \d+, Remaining Steps: \d+\)[ \t]*(?:\n|$)", re.MULTILINE), "(Current Step: N, Remaining Steps: N)"),
    "open-file": (re.compile(r"^\(Open file: [^\n]*\)[ \t]*(?:\n|$)", re.MULTILINE), "(Open file: <path>)"),
    "current-directory": (re.compile(r"^\(Current directory: [^\n]*\)[ \t]*(?:\n|$)", re.MULTILINE), "(Current directory: <path>)"),
}  # fmt: skip
# Working folders of agent sandboxes, longest first: MLGym's, then Referee's and other common ones.
WORKDIRS = ("/home/agent/workspace", "/home/agent", "/workspace", "/workdir")
_WORKDIR = re.compile(r"(?<![\w./-])(" + "|".join(re.escape(w) for w in WORKDIRS) + r")(?![\w.-])")
_COMMAND = re.compile(r"^\s*([A-Za-z_][\w-]*)")
_DIGITS = re.compile(r"\d+")

ACTIONS = {
    "file": "hidden",
    "folder": "hidden",
    "line": "cut",
    "format": "cut",
    "path": "rewritten",
    "action": "",  # unresolved
    "command": "",  # unresolved
}


def normalise(text: str, names: list[str] | tuple[str, ...]) -> str:
    """A feature's comparable form: names scrubbed, digits as N, whitespace folded."""
    return _DIGITS.sub("N", " ".join(scrubbing.scrub(text, names).split()))


def file_keys(rel: str, names: list[str] | tuple[str, ...]) -> set[str]:
    """The file and folder features of a stored path: "file:<path>", "folder:<first folder>/"."""
    path = normalise(rel, names)
    keys = {f"file:{path}"}
    parts = PurePosixPath(path).parts
    if len(parts) > 1:
        keys.add(f"folder:{parts[0]}/")
    return keys


def text_features(text: str, names: list[str] | tuple[str, ...], *, action: bool = False) -> set[str]:
    """Line, format and path features of a text (a paper, a step's thought or output); of a step's
    action, its lines and command word are "action" and "command" features: never cut (the reviewer
    judges what the agent did), so a tell among them stays unresolved."""
    found: set[str] = set()
    if not text:
        return found
    for key, (pattern, _shown) in FORMATS.items():
        if pattern.search(text):
            found.add(f"format:{key}")
    for m in _WORKDIR.finditer(text):
        found.add(f"path:{m.group(1)}")
    for line in text.splitlines():
        norm = normalise(line, names)
        if len(norm) >= LINE_MIN:
            found.add(f"{'action' if action else 'line'}:{norm}")
    if action:
        m = _COMMAND.match(text)
        if m:
            found.add(f"command:{m.group(1)}")
    return found


def _experiment(artifact: Artifact) -> Artifact | None:
    return (
        Artifact.objects.filter(research_run_id=artifact.research_run_id, stage=Artifact.Stage.EXPERIMENT)
        .exclude(pk=artifact.pk)
        .only("id", "code", "files")
        .first()
    )


def item_features(item: Any, names: list[str]) -> tuple[set[str], set[str]]:
    """(features of the item, the file/folder features among them a reviewer could be shown)."""
    found: set[str] = set()
    shown: set[str] = set()
    if item.run_id:
        steps = Step.objects.filter(run_id=item.run_id).only("thought", "action", "observation")
        for step in steps.iterator():
            found |= text_features(step.thought, names)
            found |= text_features(step.action, names, action=True)
            found |= text_features(step.observation, names)
        return found, shown
    artifact = item.artifact
    found |= text_features(artifact.content, names)
    for source in (artifact, _experiment(artifact)):
        if source is None:
            continue
        for rel in source.files or []:
            keys = file_keys(rel, names)
            found |= keys
            if PurePosixPath(rel).suffix.lower() in scrubbing.TEXT_EXTENSIONS and supplementary.file_kind(
                str(source.code), rel
            ):
                shown |= keys
    return found, shown


def detect(carried: Iterable[tuple[str, set[str]]]) -> list[dict[str, Any]]:
    """The tells among per-item features: [(system, features of one item)] -> [{key, system, counts}].

    counts: {system: [items carrying it, items of the system]} for every system of the campaign."""
    totals: dict[str, int] = defaultdict(int)
    per_key: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for system, features in carried:
        totals[system] += 1
        for key in features:
            per_key[key][system] += 1
    if len(totals) < 2:
        return []  # one system: nothing tells it from another
    tells = []
    for key, by_system in per_key.items():
        for system, n in by_system.items():
            if n < MIN_CARRYING or n < MOST * totals[system]:
                continue
            others = [s for s in totals if s != system]
            if all(by_system.get(s, 0) <= ALMOST_NONE * totals[s] for s in others):
                counts = {s: [by_system.get(s, 0), totals[s]] for s in sorted(totals)}
                tells.append({"key": key, "system": system, "counts": counts})
    return sorted(tells, key=lambda t: (t["key"].split(":", 1)[0], t["system"], t["key"]))


def _shown(key: str) -> str:
    kind, _, value = key.partition(":")
    if kind == "format":
        return FORMATS[value][1]
    return value


def campaign_check_tells(*, campaign: Any) -> dict[str, Any]:
    """Find the campaign's tells, decide what is done to each, and store the result on the campaign."""
    items = list(campaign.items.select_related("artifact__research_run", "run__agent").order_by("id"))
    names = list(campaign.blind_names or [])
    carried: list[tuple[str, set[str]]] = []
    listed: set[str] = set()
    for item in items:
        item.campaign = campaign
        features, shown = item_features(item, names or scrubbing.item_system_names(item))
        carried.append((item.system, features))
        listed |= shown
    tells = []
    for tell in detect(carried):
        kind = tell["key"].split(":", 1)[0]
        action = ACTIONS[kind]
        if kind in ("file", "folder") and tell["key"] not in listed:
            action = "never shown"  # not on the allow-list (review.blinding.supplementary): no reviewer gets it anyway
        tells.append({**tell, "kind": kind, "shown": _shown(tell["key"]), "action": action})
    systems: dict[str, int] = defaultdict(int)
    for system, _ in carried:
        systems[system] += 1
    result = {
        "rules": RULES_VERSION,
        "checked_at": timezone.now().isoformat(),
        "items": len(items),
        "systems": dict(sorted(systems.items())),
        "tells": tells,
    }
    campaign.tells = result
    campaign.save(update_fields=["tells"])
    return result


# ---------------------------------------------------------------- what the reviewers' copies do with them


def _stored(campaign: Any) -> list[dict[str, Any]]:
    data = getattr(campaign, "tells", None) or {}
    return data.get("tells") or [] if isinstance(data, dict) else []


def hidden_file_keys(campaign: Any) -> set[str]:
    """File and folder features hidden from the campaign's reviewers."""
    return {t["key"] for t in _stored(campaign) if t.get("action") == "hidden"}


def text_rules(campaign: Any) -> dict[str, set[str]]:
    """What the reviewers' copy of a text loses: {"lines": normalised lines, "formats": keys, "paths": roots}."""
    rules: dict[str, set[str]] = {"lines": set(), "formats": set(), "paths": set()}
    for tell in _stored(campaign):
        kind, _, value = tell["key"].partition(":")
        if kind == "line" and tell.get("action") == "cut":
            rules["lines"].add(value)
        elif kind == "format" and tell.get("action") == "cut" and value in FORMATS:
            rules["formats"].add(value)
        elif kind == "path" and tell.get("action") == "rewritten":
            rules["paths"].add(value)
    return rules


def action_rules(rules: dict[str, set[str]]) -> dict[str, set[str]]:
    """What a step's action loses: only its workdir paths are rewritten, nothing of it is cut."""
    return {"lines": set(), "formats": set(), "paths": rules["paths"]}


def apply_text(text: str, rules: dict[str, set[str]], names: list[str] | tuple[str, ...]) -> str:
    """A text as reviewers get it: tell lines and tool-output headers cut, workdir paths rewritten."""
    if not text or not any(rules.values()):
        return text
    for key in rules["formats"]:
        text = FORMATS[key][0].sub("", text)
    if rules["lines"]:
        kept = [line for line in text.split("\n") if normalise(line, names) not in rules["lines"]]
        text = "\n".join(kept)
    if rules["paths"]:
        text = _WORKDIR.sub(lambda m: WORKDIR if m.group(1) in rules["paths"] else m.group(0), text)
    return text


def tells_accept(*, campaign: Any, by: Any, problem: str) -> None:
    """Record that the admin opened the campaign over `problem` (stale check or unresolved tells)."""
    data = dict(campaign.tells) if isinstance(campaign.tells, dict) else {}
    data["accepted"] = {"by": by.get_username() if by else "", "at": timezone.now().isoformat(), "problem": problem}
    campaign.tells = data
    campaign.save(update_fields=["tells"])


def tells_report(campaign: Any) -> dict[str, Any]:
    """The campaign page's view of the stored check: the tells, unresolved ones, and whether it is stale."""
    data = campaign.tells if isinstance(campaign.tells, dict) else {}
    tells = data.get("tells") or []
    stale = not data or data.get("rules") != RULES_VERSION or data.get("items") != campaign.items.count()
    return {
        "checked": bool(data),
        "checked_at": datetime.fromisoformat(data["checked_at"]) if data.get("checked_at") else None,
        "systems": data.get("systems") or {},
        "tells": tells,
        "unresolved": [t for t in tells if not t.get("action")],
        "accepted": data.get("accepted"),
        "stale": stale,
    }


def open_problems(campaign: Any) -> str:
    """Why the campaign should not open yet ("" when nothing stands in the way): a stale check or unresolved tells."""
    state = tells_report(campaign)
    if state["stale"]:
        return "its items have not been checked for systematic tells by the current rules"
    if state["unresolved"]:
        shown = ", ".join(f"{t['shown']} ({t['system']})" for t in state["unresolved"][:5])
        more = f" and {len(state['unresolved']) - 5} more" if len(state["unresolved"]) > 5 else ""
        return f"{len(state['unresolved'])} systematic tell(s) cannot be hidden: {shown}{more}"
    return ""
