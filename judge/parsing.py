"""Turn a judge model's reply into validated scores, repairing messy JSON only where that is safe.

Safe repairs (each one is reported): a ```json fence or prose around the object, trailing commas,
LaTeX backslashes inside strings (`\\alpha`, `\\frac`), smart quotes used as JSON quotes, dimension
names in another case ("Novelty" for "novelty"). Anything else -- a missing dimension, a score out of
range or not an integer, an unbalanced object -- is rejected with an error that names the field, so
the judge can be asked again and a judgment that never validates is stored as failed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator

if TYPE_CHECKING:  # parsing needs no database; keep it importable on its own
    from judge.models import Rubric


class ReplyError(ValueError):
    """The reply cannot be turned into a valid judgment; the message says exactly why."""


class ReplyTruncated(ReplyError):
    """The provider stopped the reply at the token limit: whatever it holds is not a complete review."""


# How the transports report a reply cut at the token budget: Anthropic `stop_reason: "max_tokens"`,
# OpenAI (and compatible servers) `finish_reason: "length"`.
LENGTH_STOPS = frozenset({"max_tokens", "length"})


def is_length_stop(stop_reason: str | None) -> bool:
    return (stop_reason or "") in LENGTH_STOPS


@dataclass
class ParsedReply:
    scores: dict[str, dict[str, Any]]
    findings: list[dict[str, Any]] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)


# --- JSON extraction and repair -------------------------------------------------------------

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_VALID_ESCAPES = set('"\\/bfnrtu')
# JSON escapes that are almost always a LaTeX command when a letter follows: \f (form feed) and
# \b (backspace) never appear in a review, so "\frac", "\beta", "\bar" are LaTeX. \n, \t, \r are
# kept as escapes unless a known LaTeX command follows (a review does use newlines).
_LATEX_AFTER_NTR = re.compile(
    r"(?:theta|tau|times|text\w*|tilde|top|to|triangle|nabla|nu|neq|ne|not|neg|rho|right\w*|rangle|rceil|rfloor)(?![A-Za-z])"
)
_OPEN_QUOTES = "\u201c\u201d\u201e\u201f"  # smart double quotes used in place of "
# A backslash that json.loads would accept but that is LaTeX ("\\frac", "\\beta", "\\theta"): take the slow path.
_MAYBE_LATEX = re.compile(r"\\(?:[fb][A-Za-z]|(?=[ntr])" + _LATEX_AFTER_NTR.pattern + ")")
_DECODER = json.JSONDecoder(strict=False)  # raw line breaks inside strings are fine
_NEXT_TOKEN = re.compile(r"\s*(.?)", re.DOTALL)


def _next_char(text: str, pos: int) -> str:
    """The first non-space character at or after pos ('' at the end), without copying the rest."""
    return _NEXT_TOKEN.match(text, pos).group(1)


def _outer_object(text: str) -> tuple[str, bool]:
    """The first balanced {...} in text (string-aware); True when text had anything around it."""
    start = text.find("{")
    if start < 0:
        raise ReplyError("no JSON object in the reply (no '{' found)")
    depth, in_string, quote, escaped = 0, False, "", False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote or (quote in _OPEN_QUOTES and ch in _OPEN_QUOTES):
                in_string = False
        elif ch == '"' or ch in _OPEN_QUOTES:
            in_string, quote = True, ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                inner = text[start : i + 1]
                return inner, bool(text[:start].strip() or text[i + 1 :].strip())
    raise ReplyError("the JSON object is not closed (unbalanced braces or an unterminated string)")


def _is_latex(nxt: str, after: str) -> bool:
    """Is this backslash (followed by `nxt`, then `after`) a LaTeX command rather than a JSON escape?"""
    if not nxt or nxt not in _VALID_ESCAPES:
        return True  # "\\alpha", "\\sum", a lone trailing backslash: invalid JSON, certainly LaTeX
    if nxt in "fb":
        return after[:1].isalpha()
    if nxt in "ntr":
        return _LATEX_AFTER_NTR.match(nxt + after) is not None
    if nxt == "u":
        return re.match(r"[0-9a-fA-F]{4}", after) is None
    return False


def _repair(text: str, repairs: list[str]) -> str:
    """One string-aware pass: trailing commas, LaTeX backslashes, smart quotes as delimiters."""
    out: list[str] = []
    in_string, smart, i, n = False, False, 0, len(text)
    counts = {"comma": 0, "latex": 0, "smart": 0}
    while i < n:
        ch = text[i]
        if not in_string:
            if ch == '"' or ch in _OPEN_QUOTES:
                in_string, smart = True, ch != '"'
                counts["smart"] += smart
                out.append('"')
            elif ch == ",":
                if _next_char(text, i + 1) in ("}", "]"):
                    counts["comma"] += 1
                else:
                    out.append(ch)
            else:
                out.append(ch)
            i += 1
            continue
        # inside a string
        if ch == "\\":
            nxt = text[i + 1] if i + 1 < n else ""
            if _is_latex(nxt, text[i + 2 : i + 24]):  # a LaTeX command name is short
                out.append("\\\\")
                counts["latex"] += 1
                i += 1
                continue
            out.append(ch + nxt)
            i += 2
            continue
        if smart and ch in _OPEN_QUOTES:
            if _next_char(text, i + 1) in (":", ",", "}", "]", ""):
                in_string = False
                out.append('"')
                i += 1
                continue
            out.append(ch)
            i += 1
            continue
        if ch == '"':
            if smart:  # a straight quote inside a smart-quoted string is content
                out.append('\\"')
            else:
                in_string = False
                out.append(ch)
            i += 1
            continue
        out.append(ch)
        i += 1
    if counts["comma"]:
        repairs.append(f"removed {counts['comma']} trailing comma(s)")
    if counts["latex"]:
        repairs.append(f"escaped {counts['latex']} LaTeX backslash(es) inside strings")
    if counts["smart"]:
        repairs.append(f"replaced {counts['smart']} smart-quoted string delimiter(s)")
    return "".join(out)


def extract_json(text: str) -> tuple[dict[str, Any], list[str]]:
    """The reply's JSON object, and the repairs that were needed to read it. Raises ReplyError."""
    repairs: list[str] = []
    if not text or not text.strip():
        raise ReplyError("the reply is empty")
    body = text
    fence = _FENCE.search(text)
    if fence and "{" in fence.group(1):
        body = fence.group(1)
        repairs.append("removed a code fence")
    start = body.find("{")
    if start >= 0 and not _MAYBE_LATEX.search(body):  # fast path: well-formed JSON needs no character-by-character pass
        try:
            data, end = _DECODER.raw_decode(body, start)
        except json.JSONDecodeError:
            pass
        else:
            if isinstance(data, dict):
                if (body[:start].strip() or body[end:].strip()) and not fence:
                    repairs.append("removed prose around the JSON object")
                return data, repairs
    body, surrounded = _outer_object(body)
    if surrounded and not fence:
        repairs.append("removed prose around the JSON object")
    repaired = _repair(body, repairs)
    try:
        data = json.loads(repaired, strict=False)  # raw line breaks inside strings are fine
    except json.JSONDecodeError as exc:
        line = repaired.splitlines()[exc.lineno - 1] if repaired.splitlines() else ""
        raise ReplyError(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg} (near {line[max(0, exc.colno - 30) : exc.colno + 30]!r})"
        ) from exc
    if not isinstance(data, dict):
        raise ReplyError("the reply's JSON is not an object")
    return data, repairs


# --- schema from the rubric version -----------------------------------------------------------


class _Finding(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    evidence: str = Field(min_length=1)
    location: str = ""


def _dimension_model(dim: dict[str, Any]) -> type[BaseModel]:
    low, high, is_flag = dim["min"], dim["max"], dim.get("kind") == "flag"

    def whole_number(cls: Any, value: Any) -> Any:
        # true/false is an answer to a flag, and nothing else; 7.5 is never rounded into a score.
        if isinstance(value, bool):
            if is_flag:
                return int(value)
            raise ValueError(f"must be an integer from {low} to {high}, not {str(value).lower()}")
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(f"must be an integer from {low} to {high}, not a fraction")
        return value

    return create_model(
        f"Dim_{dim['key']}",
        __config__=ConfigDict(extra="ignore"),
        __validators__={"whole_number": field_validator("score", mode="before")(whole_number)},
        score=(Annotated[int, Field(ge=low, le=high)], ...),
        justification=(str, ""),
        strengths=(list[str] | None, None),
        weaknesses=(list[str] | None, None),
    )


def _normal(name: str) -> str:
    return re.sub(r"[\s_\-]+", "_", name.strip().lower())


def reply_schema(rubric: Rubric) -> type[BaseModel]:
    """A pydantic model of a valid reply to this rubric version (built once per distinct set of dimensions)."""
    return _schema_for(f"Reply_{rubric.stage}_v{rubric.version}", json.dumps(rubric.dimensions, sort_keys=True))


@lru_cache(maxsize=64)  # building a pydantic model costs milliseconds; a rubric version's dimensions never change
def _schema_for(name: str, dimensions_json: str) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for dim in json.loads(dimensions_json):
        if dim.get("kind") == "findings":
            types = tuple(dim.get("types", {}))
            finding = create_model(
                f"Finding_{dim['key']}",
                __base__=_Finding,
                type=(Literal[types] if types else str, ...),  # type: ignore[valid-type]
            )
            fields[dim["key"]] = (list[finding], ...)  # type: ignore[valid-type]
        else:
            fields[dim["key"]] = (_dimension_model(dim), ...)
    return create_model(name, __config__=ConfigDict(extra="ignore"), **fields)


def _align_keys(data: dict[str, Any], rubric: Rubric, repairs: list[str]) -> dict[str, Any]:
    """Map "Novelty" / "NOVELTY" / "overall score"-less variants onto rubric keys by key or name."""
    wanted = {}
    for dim in rubric.dimensions:
        wanted[_normal(dim["key"])] = dim["key"]
        wanted[_normal(dim["name"])] = dim["key"]
    aligned: dict[str, Any] = {}
    renamed = []
    for raw_key, value in data.items():
        key = wanted.get(_normal(str(raw_key)))
        if key is None:
            continue
        if key in aligned:
            raise ReplyError(f"dimension {key!r} appears twice in the reply")
        if raw_key != key:
            renamed.append(str(raw_key))
        aligned[key] = value
    if renamed:
        repairs.append(f"matched {len(renamed)} dimension name(s) to rubric keys")
    # A bare number for the judge's confidence is how MLR-Bench's judges wrote it.
    for dim in rubric.dimensions:
        if dim.get("kind") == "confidence" and isinstance(aligned.get(dim["key"]), int | float):
            aligned[dim["key"]] = {"score": aligned[dim["key"]], "justification": ""}
    return aligned


def _format_errors(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"])
        got = err.get("input")
        shown = (
            "" if err["type"] == "missing" else f" (got {json.dumps(got)[:60] if _jsonable(got) else repr(got)[:60]})"
        )
        message = "is missing" if err["type"] == "missing" else err["msg"]
        parts.append(f"{where}: {message}{shown}")
    return "; ".join(parts)


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def reply_parse(text: str, rubric: Rubric, *, stop_reason: str = "") -> ParsedReply:
    """Validate a judge's reply against the rubric version. Raises ReplyError with a precise message.

    A reply the transport reports as cut at the token limit raises ReplyTruncated before any
    parsing: a cut reply can still hold a balanced JSON object (the judge was writing prose after
    it, or the repairs close it), and scoring that as a complete review would be made up.
    """
    if is_length_stop(stop_reason):
        raise ReplyTruncated(
            f"the reply was cut off at the token limit (stop reason {stop_reason!r}); not parsed as a review"
        )
    data, repairs = extract_json(text)
    aligned = _align_keys(data, rubric, repairs)
    try:
        reply = reply_schema(rubric).model_validate(aligned)
    except ValidationError as exc:
        raise ReplyError(_format_errors(exc)) from exc
    scores: dict[str, dict[str, Any]] = {}
    findings: list[dict[str, Any]] = []
    missing_reasons = []
    for dim in rubric.dimensions:
        value = getattr(reply, dim["key"])
        if dim.get("kind") == "findings":
            findings = [f.model_dump() for f in value]
            continue
        entry = value.model_dump(exclude_none=True)
        if not entry["justification"].strip() and dim.get("kind") != "confidence" and not entry.get("strengths"):
            missing_reasons.append(dim["key"])
        scores[dim["key"]] = entry
    if missing_reasons:
        raise ReplyError(f"justification is missing or empty for: {', '.join(missing_reasons)}")
    return ParsedReply(scores=scores, findings=findings, repairs=repairs)
