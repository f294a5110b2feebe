"""What a reviewer may see of an item: scrubbed text, safe HTML, figures behind opaque ids.

- The item's system names (backbone label, provider, model, family) are replaced by "[system]"
  in every text shown (paper, supplementary files); in the paper after rendering, so they are
  gone from text, link targets and alt text alike. Names inside identifiers go too: at CamelCase
  humps and snake_case parts, with a version glued on (AnthropicClient, OpenAIHypothesisGenerator,
  claude_client, gpt4o_results).
- The model's preamble and sign-off around the paper (and around prose supplementary files) are
  cut from the reviewer's copy (review.blinding.chatter); the stored artifact is never changed.
- Every change (cut, scrub, hidden cost) is listed per item for the admin (`item_changes`, stored
  with the render on the campaign item and shown on the campaign page).
- Image links are rewritten to the assignment's own URL with an HMAC figure id: the stored
  path, the artifact code and the file name never reach the browser. Images that are not
  stored files of the artifact (remote URLs, missing files) are dropped, leaving their alt text.
- Markdown is rendered with raw HTML disabled and the result is cleaned by nh3 again.
- Math ($...$, $$...$$) is kept verbatim inside <span class="math"> so markdown cannot mangle it;
  the page typesets it when a math renderer is vendored (the mlr helper's partial), else shows TeX.
  Its placeholders carry a per-render random nonce, so an author cannot spoof them.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import re
import secrets
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import PurePosixPath

import nh3
from django.conf import settings
from markdown_it import MarkdownIt

from benchmark.models import Artifact
from benchmark.research import files as artifact_files
from review.blinding import supplementary, tells
from review.blinding.chatter import strip_chatter
from review.blinding.scrubbing import SCRUBBED, TEXT_EXTENSIONS, item_system_names, name_pattern, scrub

IMAGE_EXTENSIONS = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"}
ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "del", "s", "code", "pre",
    "blockquote", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td", "a", "img", "span",
    "div", "sup", "sub",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "loading"},
    "span": {"class"},
    "div": {"class"},
    "code": {"class"},
    "th": {"align"},
    "td": {"align"},
}


def figure_id(assignment_code: str, relpath: str) -> str:
    """Opaque, per-assignment: the same figure has different ids for two reviewers."""
    key = settings.SECRET_KEY.encode()
    return hmac.new(key, f"figure:{assignment_code}:{relpath}".encode(), hashlib.sha256).hexdigest()[:20]


def read_stored(artifact_code: str, relpath: str) -> bytes | None:
    """The stored file's bytes, only if it is inside the artifact's folder and exists (files.py checks)."""
    return artifact_files.read_bytes(artifact_code, relpath)


def image_map(files: list[str]) -> dict[str, str]:
    """Reference spelling in the paper -> stored relative path (exact path, and bare file name when unique)."""
    images = [f for f in files if PurePosixPath(f).suffix.lower() in IMAGE_EXTENSIONS]
    mapping = {f: f for f in images}
    by_name: dict[str, list[str]] = {}
    for f in images:
        by_name.setdefault(PurePosixPath(f).name, []).append(f)
    for name, paths in by_name.items():
        if len(paths) == 1:
            mapping.setdefault(name, paths[0])
    return mapping


_MATH = re.compile(r"(\$\$.+?\$\$|\\\[.+?\\\]|(?<![\\$\w])\$(?!\s)[^$\n]+?(?<!\s)\$(?![\w$]))", re.DOTALL)


def _protect_math(text: str) -> tuple[str, list[str], str]:
    """Swap math for placeholders so markdown leaves underscores and stars inside it alone.

    The placeholders carry a random nonce drawn per render: an author's text that spells a
    placeholder cannot make the restore step duplicate a formula or delete one.
    """
    found: list[str] = []
    nonce = secrets.token_hex(8)

    def keep(m: re.Match[str]) -> str:
        found.append(m.group(0))
        return f"MATH{nonce}N{len(found) - 1}X"

    return _MATH.sub(keep, text), found, nonce


def _restore_math(rendered: str, found: list[str], nonce: str) -> str:
    def put(m: re.Match[str]) -> str:
        tex = found[int(m.group(1))]
        display = tex.startswith("$$") or tex.startswith("\\[")
        cls = "math display" if display else "math inline"
        return f'<span class="{cls}">{html.escape(tex)}</span>'

    return re.sub(rf"MATH{nonce}N(\d+)X", put, rendered)


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").enable("strikethrough")
    return md


_MD = _markdown()


def render_markdown(text: str, *, image_url: Callable[[str], str | None]) -> str:
    """Markdown -> clean HTML. `image_url(src)` gives the opaque URL of a stored image, or None to drop it."""
    source, math, nonce = _protect_math(text)
    tokens = _MD.parse(source)
    for token in tokens:
        for child in token.children or []:
            if child.type != "image":
                continue
            src = (child.attrGet("src") or "").strip()
            url = image_url(src)
            if url is None:
                # Keep the alt text so the reader knows a figure was there.
                child.type = "text"
                child.tag = ""
                child.content = f"[figure not available: {child.content}]"
                child.children = None
                child.attrs = {}
            else:
                child.attrSet("src", url)
                child.attrSet("loading", "lazy")
    rendered = _MD.renderer.render(tokens, _MD.options, {})
    rendered = _restore_math(rendered, math, nonce)
    return nh3.clean(
        rendered,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )


def normalise_src(src: str) -> str:
    src = src.split("#", 1)[0].split("?", 1)[0]
    while src.startswith("./"):
        src = src[2:]
    return src


# ---------------------------------------------------------------- an item as a reviewer sees it


_FIG = "REVIEWFIGURE{}X"
RENDERER_VERSION = "5"  # bump when rendering, scrubbing or cutting changes: stored renders are then redone


def render_key(text: str, files: list[str], names: list[str]) -> str:
    """Identifies a render: the text, its files, the names scrubbed and the renderer version."""
    payload = json.dumps([RENDERER_VERSION, text, list(files), list(names)])
    return hashlib.sha256(payload.encode()).hexdigest()


def render_blinded(text: str, files: tuple[str, ...], names: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """Rendered, scrubbed HTML with figure placeholders (shared by all assignments of an item), and
    the stored paths the placeholders stand for, in order."""
    mapping = image_map(list(files))
    used: list[str] = []

    def url(src: str) -> str | None:
        rel = mapping.get(normalise_src(src))
        if rel is None:
            return None
        if rel not in used:
            used.append(rel)
        return _FIG.format(used.index(rel))

    # The model's preamble and sign-off go (review.blinding.chatter); then scrub the rendered HTML, not the
    # source: image paths must still match the stored files, and their placeholders carry no name.
    copy = strip_chatter(text).text
    return scrub(render_markdown(copy, image_url=url), names), tuple(used)


_render_cached = lru_cache(maxsize=256)(render_blinded)
RENDER_CACHE = True  # the benchmark switches this off to measure rendering on every request


def reviewer_text(item, names: list[str]) -> str:  # item: review.models.CampaignItem
    """The item's text before rendering: less the fixed lines its campaign cuts as tells (review.blinding.tells)."""
    return tells.apply_text(item.artifact.content, tells.text_rules(item.campaign), names)


def item_render(item) -> tuple[str, tuple[str, ...]]:  # item: review.models.CampaignItem
    """The item's blinded render: the one stored on the item when still current, else rendered here."""
    artifact = item.artifact
    names = item_system_names(item)
    files = tuple(artifact.files or [])
    text = reviewer_text(item, names)
    if RENDER_CACHE and item.rendered_key == render_key(text, list(files), names):
        return item.rendered_html, tuple(item.rendered_figures)
    render = _render_cached if RENDER_CACHE else render_blinded
    return render(text, files, tuple(names))


TITLE_PREFIX = 4000  # characters of an item's text read for its title (the queue fetches only these)
TITLE_MAX = 140
_HEADING = re.compile(r"^\s{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")
# "Title: X", "**Title:** X" (X maybe on the next line): how several models label the title.
_TITLE_LABEL = re.compile(r"(?i)^[\s#*_]*(?:paper\s+)?title[*_\s]*:[*_\s]*(.*)$")
# Section names some models put before (or instead of) the title: "1. Title and Abstract", "Abstract".
_SECTION = re.compile(
    r"(?i)^(?:\d+(?:\.\d+)*[.)]?\s+)?(?:title(?:\s+and\s+abstract)?|abstract|introduction|summary|"
    r"(?:research\s+)?(?:paper|proposal|idea)|background|related\s+work|methods?|results?|conclusions?)\s*:?$"
)
_INLINE_MARKUP = re.compile(r"[*_`$\\]|<[^>]*>")


def _plain(text: str, names: list[str] | tuple[str, ...]) -> str:
    # Scrubbed before and after the markup goes: "claude_agent" and "*Claude*" both lose the name.
    text = _INLINE_MARKUP.sub("", scrub(text, names))
    return scrub(" ".join(text.split()), names)


def item_title(text_head: str, names: list[str] | tuple[str, ...]) -> str:
    """The blinded title of an item for the reviewer's queue, "" when none is found: a labelled
    "Title: ..." line, else the first heading that is not a section name ("1. Title and Abstract"),
    markup stripped and system names scrubbed like the body. Chatter is never a title: it is
    neither labelled nor a heading (review.blinding.chatter)."""
    lines = (text_head or "").splitlines()
    for n, line in enumerate(lines):
        label = _TITLE_LABEL.match(line)
        if label:
            value = label.group(1).strip() or next((x for x in lines[n + 1 : n + 3] if x.strip()), "")
            title = _plain(value, names)
        else:
            heading = _HEADING.match(line)
            title = _plain(heading.group(1), names) if heading else ""
            if _SECTION.match(title):
                continue
        if title:
            return title if len(title) <= TITLE_MAX else title[: TITLE_MAX - 1].rstrip() + "…"
    return ""


def with_figure_urls(template: str, used: tuple[str, ...], *, assignment_code: str, base_url: str) -> str:
    """Put the assignment's own opaque figure URLs into a shared render.

    Only `src="..."` attributes are filled in: an author who writes the placeholder in the text
    (where markdown escapes the quotes) or in a link target gets it back as it was typed.
    """
    for i, rel in enumerate(used):
        template = template.replace(f'src="{_FIG.format(i)}"', f'src="{base_url}{figure_id(assignment_code, rel)}"')
    return template


def find_file(*, files: list[str], assignment_code: str, fid: str, extensions: set[str]) -> str | None:
    """The stored relative path behind an opaque id, among the files with the given extensions."""
    for rel in files:
        if PurePosixPath(rel).suffix.lower() in extensions and hmac.compare_digest(
            figure_id(assignment_code, rel), fid
        ):
            return rel
    return None


_COST = re.compile(r"""(?i)(["']?\b(?:total_)?cost(?:_usd|_in_usd)?\b["']?\s*[:=]\s*)["']?\$?[\d.eE+-]+["']?""")
PROSE_EXTENSIONS = {".md", ".txt"}  # written by the model: its chatter is cut there too


def _hide_cost(m: re.Match[str]) -> str:
    return m.group(1) + '"[hidden]"'


def scrub_supplementary(text: str, names: list[str]) -> str:
    """Code and traces: system names out, and recorded costs (`"cost_usd": 1.23`) hidden."""
    return _COST.sub(_hide_cost, scrub(text, names))


def quoted_chatter(artifact: Artifact) -> list[str]:
    """Lines of the chatter cut from the run's stage texts (idea, literature, proposal, paper...).

    A trace quotes them when the coding agent reads those files ("1\tHere is a literature review
    on..."), so they are cut from every supplementary file too, raw or JSON-escaped.
    """
    texts = Artifact.objects.filter(research_run_id=artifact.research_run_id).values_list("content", flat=True)
    lines = {
        line.strip()
        for text in texts
        for cut in strip_chatter(text).cuts
        for line in cut.text.splitlines()
        if len(line.strip()) >= QUOTED_MIN
    }
    return sorted(lines, key=lambda line: (-len(line), line))


QUOTED_MIN = 24  # characters: shorter chatter lines ("---", "Sure!") are too common to cut anywhere


def _spellings(line: str) -> list[str]:
    return list(dict.fromkeys([line, json.dumps(line)[1:-1]]))  # as written, and inside a JSON string


def blind_file(rel: str, text: str, names: list[str], quoted: list[str] = ()) -> str:
    """A supplementary file as a reviewer gets it: chatter cut (prose files, and quoted anywhere),
    names scrubbed, costs hidden."""
    if PurePosixPath(rel).suffix.lower() in PROSE_EXTENSIONS:
        text = strip_chatter(text).text
    for line in quoted:
        for spelling in _spellings(line):
            text = text.replace(spelling, "")
    return scrub_supplementary(text, names)


# ---------------------------------------------------------------- every change, for the admin


_WORD = re.compile(r"[A-Za-z0-9_]*")


def _grouped(
    kind: str, matches: Iterator[re.Match[str]], text: str, first_line: int, shown: Callable, *, expand: bool = True
) -> list:
    """One entry per distinct original word (the whole identifier a name sat in, so the admin sees
    AnthropicClient -> [system]Client): how often, on which lines (the first 20)."""
    groups: dict[str, dict] = {}
    line, pos = first_line, 0
    for m in matches:
        line += text.count("\n", pos, m.start())
        pos = m.start()
        start, end = m.start(), m.end()
        if expand:
            if start >= 2 and text[start - 2] == "\\" and text[start - 1] in "ntr":
                start -= 2  # a JSON escape right before the name: show it, it is why the name was found
            else:
                start -= len(_WORD.match(text[max(0, start - 80) : start][::-1]).group(0))
            end += len(_WORD.match(text, end).group(0))
        word = text[start:end]
        entry = groups.setdefault(
            word,
            {
                "kind": kind,
                "text": word,
                "shown": text[start : m.start()] + shown(m) + text[m.end() : end],
                "count": 0,
                "lines": [],
            },
        )
        entry["count"] += 1
        if len(entry["lines"]) < 20 and line not in entry["lines"]:
            entry["lines"].append(line)
    return sorted(groups.values(), key=lambda e: (e["lines"][0], e["text"]))


def text_changes(text: str, names: list[str], *, prose: bool, costs: bool, quoted: list[str] = ()) -> list[dict]:
    """Every change the reviewer's copy of `text` makes: cuts, scrubs and hidden costs, with lines
    of the original text (what the judge and the record keep, untouched)."""
    changes: list[dict] = []
    first_line = 1
    if prose:
        stripped = strip_chatter(text)
        changes += [
            {"kind": cut.kind, "text": cut.text, "shown": "", "count": 1, "lines": [cut.line]} for cut in stripped.cuts
        ]
        text, first_line = stripped.text, stripped.first_line
    for line in quoted:
        for spelling in _spellings(line):
            found = re.finditer(re.escape(spelling), text)
            changes += _grouped("quoted-chatter", found, text, first_line, lambda m: "", expand=False)
            text = text.replace(spelling, "")
    pattern = name_pattern(tuple(names))
    if pattern is not None:
        changes += _grouped("scrub", pattern.finditer(text), text, first_line, lambda m: SCRUBBED)
    if costs:
        scrubbed = scrub(text, names)  # as served: costs are hidden after the scrub
        changes += _grouped("cost", _COST.finditer(scrubbed), scrubbed, first_line, _hide_cost)
    return changes


def supplementary_files(item) -> list[tuple[Artifact, str]]:  # item: review.models.CampaignItem
    """(artifact, relpath) of the files a reviewer may open, the item's and its run's experiment
    stage's: only the kinds on the allow-list (review.blinding.supplementary: never a judge's or a reviewer's
    output), less the files the campaign hides as a tell of their system (review.blinding.tells). The item
    page lists exactly these, and the serving view serves nothing else."""
    return [(artifact, rel) for artifact, rel, why in item_files(item) if not why]


def item_files(item) -> list[tuple[Artifact, str, str]]:  # item: review.models.CampaignItem
    """Every stored non-image file of the item and its run's experiment stage, with why a reviewer
    does not get it ("" when they do): not on the allow-list, a judge's output, a tell of its system."""
    if not item.artifact_id:  # a trajectory item: its steps are the material
        return []
    item_artifact = item.artifact
    artifacts = [item_artifact]
    experiment = (
        Artifact.objects.filter(research_run_id=item_artifact.research_run_id, stage=Artifact.Stage.EXPERIMENT)
        .exclude(pk=item_artifact.pk)
        .first()
    )
    if experiment:
        artifacts.append(experiment)
    hidden = tells.hidden_file_keys(item.campaign)
    names = item_system_names(item) if hidden else []
    out = []
    for artifact in artifacts:
        for rel in artifact.files or []:
            suffix = PurePosixPath(rel).suffix.lower()
            if suffix in IMAGE_EXTENSIONS:
                continue  # figures reach the reviewer through the paper's own links, nothing else
            why = "" if suffix in TEXT_EXTENSIONS else "not on the allow-list"
            why = why or supplementary.why_withheld(str(artifact.code), rel)
            if not why and hidden and tells.file_keys(rel, names) & hidden:
                why = "a tell of its system (review.blinding.tells)"
            out.append((artifact, rel, why))
    return out


def item_changes(item, names: list[str]) -> list[dict]:  # item: review.models.CampaignItem
    """[{"file", "changes": [...]}]: the paper's changes, then each supplementary file's."""
    out = [{"file": "paper", "changes": text_changes(item.artifact.content, names, prose=True, costs=False)}]
    quoted = quoted_chatter(item.artifact)
    for artifact, rel in supplementary_files(item):
        text = artifact_files.read_text(str(artifact.code), rel)
        if text is None:
            continue
        prose = PurePosixPath(rel).suffix.lower() in PROSE_EXTENSIONS
        changes = text_changes(text, names, prose=prose, costs=True, quoted=quoted)
        if changes:
            out.append({"file": f"{artifact.stage}/{rel}", "changes": changes})
    for artifact, rel, why in item_files(item):
        if why:  # the file as stored (admins only): reviewers get neither its name nor its content
            change = {"kind": "withheld", "text": f"{rel}: {why}", "shown": "", "count": 1, "lines": []}
            out.append({"file": f"{artifact.stage}/{rel}", "changes": [change]})
    return out
