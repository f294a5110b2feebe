"""A model's chatter around the text it was asked for: preambles and sign-offs.

"Okay, here is a research proposal based on the provided task description...", "Here is the
machine learning project paper:", "I hope this helps", "Let me know if you want...", a closing
"*(Note: references from the literature review were used as provided)*". None of it belongs to
the paper; all of it tells a reviewer that a model wrote the item, and its wording fingerprints
the model. The reviewer's copy loses it; the stored artifact (what the judge reads, the record)
keeps every byte, and the campaign page lists each cut for the admin.

Only the edges of the text are cut (leading and trailing paragraphs, and the markdown code fence
some models wrap a whole answer in); a sentence inside the paper is never touched. A paragraph is
chatter only when it is short, is no heading, and opens the way model chatter opens.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_CHATTER = 1000  # characters: a paragraph longer than this is content, whatever its first words
MAX_CUTS = 4  # per edge: "Sure!" + "Here is the paper:" + "---" come in twos and threes

_THEMATIC_BREAK = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_WHAT = (
    r"(?:paper|draft|manuscript|report|proposal|idea|write-?up|article|document|version|summary|"
    r"review|results?|analysis|outline|response|answer|submission|abstract|literature)"
)
_PREAMBLE = re.compile(
    r"""^[*_\s]*(?:
        (?:okay|ok|sure|certainly|absolutely|alright|all\s+right|of\s+course|great|understood|got\s+it|
           perfect|excellent|very\s+well|no\s+problem)\b[\s,!.:-]+
           (?:here|i\b|i'll|i'm|i've|let\s+me|below|the\s+following|this\s+is|based\s+on|as\s+requested)
      | (?:here\s+is|here's|here\s+are|below\s+is|below\s+are|the\s+following\s+is|attached\s+is|
           please\s+find)\b[^\n]{0,200}?\b"""
    + _WHAT
    + r"""\b
      | i\s+(?:have|'ve)\s+(?:now\s+)?(?:written|drafted|prepared|created|produced|revised|completed|generated)\b
      | i\s*(?:will|'ll|shall|am\s+going\s+to)\s+(?:now\s+)?(?:proceed\s+to\s+)?
           (?:write|draft|prepare|produce|generate|compose|create|present|provide|outline)\b
      | let\s+me\s+(?:now\s+)?(?:write|draft|prepare|put\s+together|compose|present|outline|provide)\b
      | (?:as\s+requested|per\s+your\s+(?:request|instructions)|following\s+your\s+(?:instructions|request))\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_SIGNOFF = re.compile(
    r"""^[*_\s(]*(?:
        i\s+hope\s+(?:this|that|the|it|you)\b
      | (?:please\s+)?let\s+me\s+know\b
      | feel\s+free\s+to\b
      | if\s+you\s+(?:need|want|would\s+like|'d\s+like|have\s+any|require)\b
      | (?:would|do|shall)\s+you\s+(?:like|want)\s+me\s+to\b
      | is\s+there\s+anything\s+else\b
      | (?:i'm|i\s+am|i'd\s+be)\s+happy\s+to\b
      | happy\s+to\s+(?:help|revise|adjust|expand|elaborate)\b
      | i\s+can\s+(?:also\s+)?(?:revise|expand|adjust|provide|elaborate|help)\b
      | thank\s+you\s+for\b
      | (?:formatting\s+|final\s+)?note\b[*_]*\s*[:\-]   # a closing "*(Note: ...)*", "**Note**: ..."
      | (?:total\s+)?word\s+count\b | total\s+words\b   # "*Word Count: 1,997*"
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_FENCE_OPEN = re.compile(r"^\s*```[ \t]*(?:markdown|md|text)?[ \t]*\n", re.IGNORECASE)
_FENCE_CLOSE = re.compile(r"\n[ \t]*```\s*$")


@dataclass(frozen=True)
class Cut:
    kind: str  # preamble | signoff | fence
    line: int  # 1-based line of the original text where the cut text starts
    text: str

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "line": self.line, "text": self.text}


@dataclass(frozen=True)
class Stripped:
    text: str  # the reviewer's copy
    cuts: list[Cut]
    first_line: int  # line of the original text where the copy's first line stands


def _blocks(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the paragraphs: runs of non-blank lines."""
    return [(m.start(), m.end()) for m in re.finditer(r"[^\n]*\S[^\n]*(?:\n[^\n]*\S[^\n]*)*", text)]


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _is_chatter(block: str, pattern: re.Pattern[str]) -> bool:
    stripped = block.strip()
    return len(stripped) <= MAX_CHATTER and not stripped.startswith("#") and bool(pattern.match(stripped))


def strip_chatter(text: str) -> Stripped:
    """The reviewer's copy of `text` without leading/trailing model chatter, and what was cut."""
    cuts: list[Cut] = []
    start, end = 0, len(text)
    fence_open = _FENCE_OPEN.match(text)
    if fence_open and _FENCE_CLOSE.search(text) and text.count("```") == 2:
        # The whole answer wrapped in one ```markdown fence: the fence goes, what it holds stays.
        close = _FENCE_CLOSE.search(text)
        cuts.append(Cut("fence", 1, text[: fence_open.end()].strip()))
        cuts.append(Cut("fence", _line(text, close.start() + 1), text[close.start() :].strip()))
        start, end = fence_open.end(), close.start()
    blocks = [(a, b) for a, b in _blocks(text) if start <= a and b <= end]
    head = 0
    while head < len(blocks) and sum(c.kind == "preamble" for c in cuts) < MAX_CUTS:
        a, b = blocks[head]
        block = text[a:b]
        if _THEMATIC_BREAK.match(block) and any(c.kind == "preamble" for c in cuts):
            cuts.append(Cut("preamble", _line(text, a), block.strip()))  # the "---" under a preamble
            head += 1
            start = b
            continue
        if not _is_chatter(block, _PREAMBLE):
            break
        cuts.append(Cut("preamble", _line(text, a), block.strip()))
        head += 1
        start = b
    tail = len(blocks)
    signoffs = 0
    while tail > head and signoffs < MAX_CUTS:
        a, b = blocks[tail - 1]
        block = text[a:b]
        if _THEMATIC_BREAK.match(block):
            # A closing "---" is cut with the sign-off above or below it, never on its own.
            if signoffs or (tail - 2 >= head and _is_chatter(text[slice(*blocks[tail - 2])], _SIGNOFF)):
                cuts.append(Cut("signoff", _line(text, a), block.strip()))
                tail -= 1
                end = a
                continue
            break
        if not _is_chatter(block, _SIGNOFF):
            break
        cuts.append(Cut("signoff", _line(text, a), block.strip()))
        signoffs += 1
        tail -= 1
        end = a
    if not cuts:
        return Stripped(text, [], 1)
    while start < end and text[start] == "\n":
        start += 1
    body = text[start:end].rstrip("\n")
    return Stripped(
        body + ("\n" if text.endswith("\n") else ""), sorted(cuts, key=lambda c: c.line), _line(text, start)
    )
