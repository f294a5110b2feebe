"""WCAG 2.x contrast of every visible text on a page, computed in the browser (Playwright).

`CONTRAST_JS` walks the text nodes under a root and, for each one that renders (it has a box, is not
visibility:hidden, is not clipped to a pixel as screen-reader-only text is), takes its element's
computed colour (an SVG text's fill) and the colour behind it: every ancestor's background composited
from the page's white down, alpha included, with the element's own opacity applied to the text. It
returns the ratio and whether the text is large (>= 24 px, or >= 18.66 px bold), for which WCAG AA
asks 3:1 instead of 4.5:1. Disabled controls are left out: WCAG exempts inactive components.
"""

from __future__ import annotations

from typing import Any

CONTRAST_JS = """
(root) => {
  const channel = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  const parse = (c) => {
    const n = (c || "").match(/[\\d.]+/g);
    if (!n || n.length < 3) return null;
    return [+n[0], +n[1], +n[2], n.length > 3 ? +n[3] : 1];
  };
  const over = (top, below) => [0, 1, 2].map((i) => top[3] * top[i] + (1 - top[3]) * below[i]);
  const opacity = (el) => {
    let o = 1;
    for (let e = el; e; e = e.parentElement) o *= +getComputedStyle(e).opacity;
    return o;
  };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      if (e instanceof SVGElement && !(e instanceof SVGSVGElement)) continue;
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) layers.push(c);
      if (c && c[3] === 1) break;
    }
    let colour = [255, 255, 255];
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  const out = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const text = walker.currentNode.textContent.trim();
    const el = walker.currentNode.parentElement;
    if (!text || !el || el.closest("script, style, noscript, option, [disabled]")) continue;
    const rects = el.getClientRects();
    if (!rects.length) continue;
    const box = el.getBoundingClientRect();
    if (box.width * box.height <= 1) continue;  // screen-reader-only text, clipped to a pixel
    const style = getComputedStyle(el);
    if (style.visibility !== "visible") continue;
    const svg = el instanceof SVGElement;
    let fg = parse(svg ? style.fill : style.color);
    if (!fg) continue;
    const bg = background(el);
    fg = [fg[0], fg[1], fg[2], fg[3] * (svg ? +style.fillOpacity || 1 : 1) * opacity(el)];
    const shown = over(fg, bg);
    const [a, b] = [lum(shown), lum(bg)].sort((x, y) => y - x);
    const size = parseFloat(style.fontSize);
    const bold = parseInt(style.fontWeight, 10) >= 700;
    const large = size >= 24 || (bold && size >= 18.66);
    const ratio = (a + 0.05) / (b + 0.05);
    out.push({
      text: text.slice(0, 50), tag: el.tagName, cls: String(el.className && el.className.baseVal !== undefined ? el.className.baseVal : el.className).slice(0, 40),
      ratio: Math.round(ratio * 100) / 100, large,
      fg: shown.map(Math.round).join(","), bg: bg.map(Math.round).join(","),
    });
  }
  return out;
}
"""


def low_contrast(page: Any, selector: str = "body") -> tuple[list[dict[str, Any]], int]:
    """(the texts under `selector` below WCAG AA, how many texts were measured)."""
    texts = page.eval_on_selector(selector, CONTRAST_JS)
    low = [t for t in texts if t["ratio"] < (3.0 if t["large"] else 4.5)]
    return low, len(texts)
