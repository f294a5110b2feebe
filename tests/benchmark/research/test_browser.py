"""In a real browser: the paper page draws its math with the vendored KaTeX and shows its figures (no CDN)."""

from __future__ import annotations

import struct
import zlib

import pytest
from django.test import Client

from benchmark.models import Artifact, ResearchRun, Task
from benchmark.research.files import file_store

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _png(width: int = 4, height: int = 3) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def test_it_renders_math_and_figures_of_a_paper_offline(live_server, researcher, tmp_path, monkeypatch, settings):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.MEDIA_ROOT = tmp_path / "media"
    task = Task.objects.create(
        slug="iclr2025_b", version_hash="b" * 64, kind=Task.Kind.MLR, title="B", description="# B"
    )
    run = ResearchRun.objects.create(task=task, owner=researcher, backbone="anthropic:x", status="finished")
    paper = Artifact.objects.create(
        research_run=run,
        stage="paper",
        content="# Paper\n\nInline $a_i^2$ and\n\n$$\\frac{1}{n}\\sum_i x_i$$\n\n![Accuracy](figures/acc.png)",
    )
    paper.files = [file_store(artifact=paper, relative="figures/acc.png", data=_png())]
    paper.data = {"figure_map": {"figures/acc.png": "figures/acc.png"}}
    paper.save()
    client = Client()
    client.force_login(researcher)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value

    outside: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        context = browser.new_context()
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_server.url}])
        page = context.new_page()
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(live_server.url) else None)
        page.goto(f"{live_server.url}/research/{run.code}/paper/")
        page.wait_for_selector(".markdown span.math[data-rendered] .katex", timeout=10_000)
        assert page.locator(".markdown .katex-display").count() == 1  # the $$ block, as display math
        assert page.locator(".markdown span.math .katex").count() == 2
        width = page.locator('.markdown img[alt="Accuracy"]').evaluate("img => img.complete && img.naturalWidth")
        assert width == 4
        page.evaluate("document.fonts.ready")
        browser.close()
    assert outside == []  # KaTeX, its fonts and the figure all come from Referee itself
