"""Markdown -> safe HTML for task descriptions (untrusted text: raw HTML is escaped, then sanitised)."""

from __future__ import annotations

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

# html=False: HTML in the source is shown as text; nh3 is the second line (links, odd URLs).
_renderer = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def markdown_html(text: str) -> SafeString:
    html = _renderer.render(text or "")
    return mark_safe(nh3.clean(html, url_schemes={"http", "https", "mailto"}, link_rel="noopener noreferrer nofollow"))  # noqa: S308  (sanitised by nh3)
