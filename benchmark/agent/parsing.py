"""Splitting a model reply into its discussion and its one command (MLGym's response format)."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A fenced block: ``` or ```bash / ```sh ... ``` on its own line.
_FENCE = re.compile(r"^```[ \t]*[A-Za-z0-9_-]*[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)

FORMAT_ERROR = """Your output was not formatted correctly ({why}). You must always include one discussion and one command as part of your response. Make sure you do not have multiple discussion/command tags.
Please make sure your output precisely matches the following format:
DISCUSSION
Discuss here with yourself about what your planning and what you're going to do in this step.

```
command(s) that you're going to run
```
"""


class FormatError(ValueError):
    """The reply does not hold exactly one command block; the message says what is wrong."""


@dataclass(frozen=True)
class Parsed:
    thought: str
    action: str


def parse_reply(text: str) -> Parsed:
    """Discussion = everything before the command block; action = the block's content.

    Exactly one command block is required: two commands in one reply are rejected, as in MLGym,
    because the agent would not see the first one's output before deciding on the second.
    """
    blocks = list(_FENCE.finditer(text))
    if not blocks:
        raise FormatError("no command block (``` ... ```) found")
    first = blocks[0]
    if len(blocks) > 1:
        # An edit's replacement text may itself hold ``` lines (a markdown file): accept the reply
        # when the first block starts an edit/insert whose end marker comes after the last fence.
        name = command_name(first.group(1))
        marker = {"edit": "end_of_edit", "insert": "end_of_insert"}.get(name)
        tail = text[first.start() :]
        if marker is None or marker not in tail:
            raise FormatError(f"{len(blocks)} command blocks found; send exactly one")
        body = tail.split("\n", 1)[1]
        action = body[: body.rindex(marker) + len(marker)]
        return Parsed(thought=text[: first.start()].strip() + "\n\n", action=action.strip("\n") + "\n")
    action = first.group(1)
    if not action.strip():
        raise FormatError("the command block is empty")
    thought = text[: first.start()]
    trailing = text[first.end() :].strip()
    if trailing:
        # MLGym asks for nothing after the command; keep it in the thought so nothing is lost.
        thought = thought.rstrip() + "\n" + trailing
    return Parsed(thought=thought.strip() + "\n\n", action=action.rstrip("\n") + "\n")


def command_name(action: str) -> str:
    stripped = action.strip()
    return stripped.split(maxsplit=1)[0] if stripped else ""
