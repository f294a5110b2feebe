"""What a reviewer may see of an item: scrubbed text, safe HTML, figures behind opaque ids.

- The item's system names (backbone label, provider, model, family) are replaced by "[system]"
  in every text shown (paper, supplementary files); in the paper after rendering, so they are
  gone from text, link targets and alt text alike.
- Image links are rewritten to the assignment's own URL with an HMAC figure id: the stored
  path, the artifact code and the file name never reach the browser. Images that are not
  stored files of the artifact (remote URLs, missing files) are dropped, leaving their alt text.
- Markdown is rendered with raw HTML disabled and the result is cleaned by nh3 again.
- Math ($...$, $$...$$) is kept verbatim inside <span class="math"> so markdown cannot mangle it;
  the page typesets it when a math renderer is vendored (the mlr helper's partial), else shows TeX.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path, PurePosixPath

import nh3
from django.conf import settings
from markdown_it import MarkdownIt

from benchmark.models import Artifact

SCRUBBED = "[system]"
IMAGE_EXTENSIONS = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"}
TEXT_EXTENSIONS = {".py", ".md", ".txt", ".json", ".yaml", ".yml", ".sh", ".cfg", ".toml", ".csv", ".log", ".ipynb"}
# Model families: a backbone "claude-3-7-sonnet" also scrubs the bare "Claude", "anthropic" and so on.
FAMILIES = {
    "claude": ("claude", "anthropic", "sonnet", "opus", "haiku"),
    "gemini": ("gemini", "bard"),
    "gpt": ("gpt", "openai", "chatgpt"),
    "o1": ("openai",),
    "o3": ("openai",),
    "o4": ("openai",),
    "llama": ("llama", "meta-llama"),
    "qwen": ("qwen",),
    "deepseek": ("deepseek",),
    "mistral": ("mistral", "mixtral"),
}

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


def system_names(*labels: str) -> list[str]:
    """Every spelling of the systems behind an item that must not be shown: longest first."""
    names: set[str] = set()
    for label in labels:
        label = (label or "").strip()
        if not label:
            continue
        names.add(label)
        if ":" in label:
            provider, _, model = label.partition(":")
            names.update({provider, model})
        for name in list(names):
            head = re.split(r"[-_.:/ ]", name.lower(), maxsplit=1)[0]
            names.update(FAMILIES.get(head, ()))
    return sorted((n for n in names if len(n) >= 2), key=len, reverse=True)


@lru_cache(maxsize=256)
def _pattern(names: tuple[str, ...]) -> re.Pattern[str] | None:
    if not names:
        return None
    # A name plus any version suffix (claude-3-7-sonnet, gemini-2.5-pro), not inside another word.
    alternatives = "|".join(re.escape(n) for n in names)
    # Not inside another word, but after an escape such as "\\n" in JSON traces ("\\nclaude_code/").
    start = r"(?:(?<![A-Za-z0-9])|(?<=\\[ntr]))"
    return re.compile(rf"{start}(?:{alternatives})(?:[-_.][A-Za-z0-9]+)*(?![A-Za-z0-9])", re.IGNORECASE)


def scrub(text: str, names: list[str] | tuple[str, ...]) -> str:
    pattern = _pattern(tuple(names))
    return pattern.sub(SCRUBBED, text) if pattern else text


def figure_id(assignment_code: str, relpath: str) -> str:
    """Opaque, per-assignment: the same figure has different ids for two reviewers."""
    key = settings.SECRET_KEY.encode()
    return hmac.new(key, f"figure:{assignment_code}:{relpath}".encode(), hashlib.sha256).hexdigest()[:20]


def artifact_dir(artifact_code: str) -> Path:
    return Path(settings.MEDIA_ROOT) / "artifacts" / str(artifact_code)


def resolve_stored(artifact_code: str, relpath: str) -> Path | None:
    """The stored file, only if it is inside the artifact's folder and exists."""
    base = artifact_dir(artifact_code).resolve()
    path = (base / relpath).resolve()
    if base not in path.parents or not path.is_file():
        return None
    return path


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


def _protect_math(text: str) -> tuple[str, list[str]]:
    """Swap math for placeholders so markdown leaves underscores and stars inside it alone."""
    found: list[str] = []

    def keep(m: re.Match[str]) -> str:
        found.append(m.group(0))
        return f"MATHPLACEHOLDER{len(found) - 1}X"

    return _MATH.sub(keep, text), found


def _restore_math(rendered: str, found: list[str]) -> str:
    def put(m: re.Match[str]) -> str:
        tex = found[int(m.group(1))]
        display = tex.startswith("$$") or tex.startswith("\\[")
        cls = "math display" if display else "math inline"
        return f'<span class="{cls}">{html.escape(tex)}</span>'

    return re.sub(r"MATHPLACEHOLDER(\d+)X", put, rendered)


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").enable("strikethrough")
    return md


_MD = _markdown()


def render_markdown(text: str, *, image_url: Callable[[str], str | None]) -> str:
    """Markdown -> clean HTML. `image_url(src)` gives the opaque URL of a stored image, or None to drop it."""
    source, math = _protect_math(text)
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
    rendered = _restore_math(rendered, math)
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


def artifact_labels(artifact: Artifact) -> list[str]:
    """Raw labels of everything that produced an artifact: backbone, models in the run settings,
    the experiment's coding agent (e.g. "Claude Code" in the released runs), the agent config."""
    run = artifact.research_run
    labels = [run.backbone]
    for key, value in (run.settings or {}).items():
        if "model" in key.lower() and isinstance(value, str):
            labels.append(value)
    experiment = Artifact.objects.filter(research_run_id=run.pk, stage=Artifact.Stage.EXPERIMENT).only("data").first()
    if experiment and isinstance((experiment.data or {}).get("agent"), str):
        labels.append(experiment.data["agent"])
    if artifact.experiment_run_id:
        agent = artifact.experiment_run.agent
        labels += [agent.model, agent.name, artifact.experiment_run.method]
    return [label for label in labels if label]


def item_system_names(item) -> list[str]:  # item: review.models.CampaignItem
    """Every name scrubbed from an item: those of every system in its campaign, not only its own.

    Scrubbing only the item's own system would itself be a tell: a fixed sentence that names
    several models ("GPT-4o-mini, o4-mini or Claude") would lose a different word in each system's items.
    """
    names = set(item.campaign.blind_names or [])
    if not names:  # a campaign from before blind_names, or one still being built
        names = set(system_names(*artifact_labels(item.artifact)))
    return sorted(names, key=lambda n: (-len(n), n))


_FIG = "REVIEWFIGURE{}X"
RENDERER_VERSION = "3"  # bump when rendering or scrubbing changes: stored renders are then redone


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

    # Scrub the rendered HTML, not the source: image paths must still match the stored files, and
    # the placeholders that replace them carry no name.
    return scrub(render_markdown(text, image_url=url), names), tuple(used)


_render_cached = lru_cache(maxsize=256)(render_blinded)
RENDER_CACHE = True  # the benchmark switches this off to measure rendering on every request


def item_render(item) -> tuple[str, tuple[str, ...]]:  # item: review.models.CampaignItem
    """The item's blinded render: the one stored on the item when still current, else rendered here."""
    artifact = item.artifact
    names = item_system_names(item)
    files = tuple(artifact.files or [])
    if RENDER_CACHE and item.rendered_key == render_key(artifact.content, list(files), names):
        return item.rendered_html, tuple(item.rendered_figures)
    render = _render_cached if RENDER_CACHE else render_blinded
    return render(artifact.content, files, tuple(names))


def with_figure_urls(template: str, used: tuple[str, ...], *, assignment_code: str, base_url: str) -> str:
    """Put the assignment's own opaque figure URLs into a shared render."""
    for i, rel in enumerate(used):
        template = template.replace(_FIG.format(i), base_url + figure_id(assignment_code, rel))
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


def scrub_supplementary(text: str, names: list[str]) -> str:
    """Code and traces: system names out, and recorded costs (`"cost_usd": 1.23`) hidden."""
    return _COST.sub(lambda m: m.group(1) + '"[hidden]"', scrub(text, names))
