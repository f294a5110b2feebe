"""Safe markdown for agent-written text: markdown-it-py renders, nh3 sanitises, KaTeX draws math in the browser.

Papers, proposals and reviews are written by models (or imported), so they are untrusted
HTML sources: everything goes through nh3 with a fixed allow-list. LaTeX math is cut out
before markdown parsing (markdown would read `_` and `*` inside formulas as emphasis) and put
back, HTML-escaped, with its delimiters, inside `<span class="math">`, where KaTeX's
auto-render (static/js/markdown.js) finds it.
"""

from __future__ import annotations

import html
import re
import secrets
from collections.abc import Callable

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

# Display math first, then inline; `\$` is a literal dollar, and `$` followed by a digit and a
# space-free run like "$5" is left alone when it has no closing `$` on the same line.
_MATH = re.compile(
    r"(?<!\\)\$\$.+?(?<!\\)\$\$"  # $$ ... $$ (may span lines)
    r"|\\\[.+?\\\]"  # \[ ... \]
    r"|\\\(.+?\\\)"  # \( ... \)
    r"|(?<![\\$])\$(?=\S)[^$\n]+?(?<=\S)(?<!\\)\$(?!\d)",  # $ ... $ on one line
    re.DOTALL,
)
# Plain letters and digits: markdown-it leaves them alone (it rewrites control characters such as
# NUL). A nonce drawn per render makes them unguessable: an author's text that spells a placeholder
# cannot make the restore step duplicate a formula or delete one.
_PLACEHOLDER = "REFEREEMATH{nonce}N{index}Q"

_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "div", "em", "figcaption", "figure",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "li", "ol", "p", "pre", "s", "span",
    "strong", "sub", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "loading"},
    "td": {"style"},
    "th": {"style"},
    "code": {"class"},
    "span": {"class"},
    "div": {"class"},
}


def _protect_math(text: str) -> tuple[str, list[str], re.Pattern[str]]:
    """(text with placeholders, the formulas, the pattern of this render's placeholders)."""
    found: list[str] = []
    nonce = secrets.token_hex(8)

    def keep(match: re.Match[str]) -> str:
        found.append(match.group(0))
        return _PLACEHOLDER.format(nonce=nonce, index=len(found) - 1)

    return _MATH.sub(keep, text), found, re.compile(_PLACEHOLDER.format(nonce=nonce, index=r"(\d+)"))


def _parser(image_url: Callable[[str], str | None] | None) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
    md.enable("strikethrough")
    if image_url is None:
        return md

    default_image = md.renderer.rules["image"]

    def image(renderer, tokens, idx, options, env):  # type: ignore[no-untyped-def]
        token = tokens[idx]
        mapped = image_url(str(token.attrGet("src") or ""))
        if mapped is None:
            alt = "".join(child.content for child in token.children or [])
            src = html.escape(str(token.attrGet("src") or ""))
            return f'<span class="missing-figure">[figure not found: {src}{" - " + html.escape(alt) if alt else ""}]</span>'
        token.attrSet("src", mapped)
        token.attrSet("loading", "lazy")
        return default_image(tokens, idx, options, env)

    md.add_render_rule("image", image)
    return md


def markdown_html(text: str, *, image_url: Callable[[str], str | None] | None = None) -> SafeString:
    """Sanitised HTML for `text`. `image_url(src)` maps each image path to a served URL, or None if missing."""
    protected, maths, placeholder = _protect_math(text or "")
    rendered = _parser(image_url).render(protected)

    def restore(match: re.Match[str]) -> str:
        index = int(match.group(1))
        if index >= len(maths):
            return ""
        # Wrapped so that the page script renders exactly what was recognised here as math
        # (a stray "$5 ... $10" in prose stays prose).
        return f'<span class="math">{html.escape(maths[index], quote=False)}</span>'

    rendered = placeholder.sub(restore, rendered)
    cleaned = nh3.clean(
        rendered,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(cleaned)  # sanitised by nh3 just above
