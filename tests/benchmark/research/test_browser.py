"""In a real browser: the paper page draws its math with the vendored KaTeX and shows its figures (no CDN)."""

# ruff: noqa: F811  (pytest fixtures imported from other test modules are redefined as arguments)
from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest
from django.test import Client

from benchmark.models import Artifact, ResearchRun, Task
from benchmark.research.files import file_store
from tests.benchmark.runs.test_browser import browser_page  # noqa: F401  (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _png(width: int = 4, height: int = 3) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def test_it_renders_math_and_figures_of_a_paper_offline(live_url, researcher, monkeypatch, settings):
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    settings.MEDIA_ROOT = Path(live_url.media_root)  # where the served stack reads stored figures
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
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_url}])
        page = context.new_page()
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(live_url) else None)
        page.goto(f"{live_url}/research/{run.code}/paper/")
        page.wait_for_selector(".markdown span.math[data-rendered] .katex", timeout=10_000)
        assert page.locator(".markdown .katex-display").count() == 1  # the $$ block, as display math
        assert page.locator(".markdown span.math .katex").count() == 2
        width = page.locator('.markdown img[alt="Accuracy"]').evaluate("img => img.complete && img.naturalWidth")
        assert width == 4
        page.evaluate("document.fonts.ready")
        browser.close()
    assert outside == []  # KaTeX, its fonts and the figure all come from Referee itself


def test_it_renders_finished_stages_live_with_red_failures_and_a_form_for_the_chosen_mode(
    live_url,
    browser_page,
    researcher,
    redis_client,
    tmp_path,
    settings,
):
    """Over the real websocket (daphne + Redis): a stage that finishes while the page is open shows
    its text without a reload; a failed one turns red. The launch form hides what its mode does not use."""
    import threading

    from benchmark.research.services import _publish
    from tests.benchmark.runs.test_browser import signed_in

    def publish(run: ResearchRun) -> None:  # as the worker does; async_to_sync cannot run on Playwright's loop
        thread = threading.Thread(target=_publish, args=(run,))
        thread.start()
        thread.join()

    settings.MEDIA_ROOT = Path(live_url.media_root)  # where the served stack reads stored figures
    task = Task.objects.create(
        slug="iclr2025_live", version_hash="l" * 64, kind=Task.Kind.MLR, title="Live workshop", description="# L"
    )
    Task.objects.create(
        slug="iclr2025_bi_align", version_hash="m" * 64, kind=Task.Kind.MLR, title="Bidirectional alignment"
    )
    run = ResearchRun.objects.create(
        task=task, owner=researcher, backbone="anthropic:x", status="running", stages=["idea", "experiment"]
    )
    idea = Artifact.objects.create(research_run=run, stage="idea", status="running")
    page = signed_in(browser_page, live_url, researcher).new_page()
    page.goto(f"{live_url}/research/{run.code}/")
    page.wait_for_selector("#timeline[data-live='1']")
    page.evaluate("window.notReloaded = true")
    idea.status, idea.content = "done", "# The idea\n\nMinimise $x_i^2$ live."
    idea.save()
    publish(run)
    page.wait_for_selector("#stage-idea[data-status=done] .markdown h1")
    assert "Minimise" in page.locator("#stage-idea").inner_text()
    assert "ok" in page.locator("li[data-stage=idea] [data-part=status]").get_attribute("class")
    Artifact.objects.create(research_run=run, stage="experiment", status="failed", error="the sandbox ran out of disk")
    publish(run)
    page.wait_for_selector("#stage-experiment[data-status=failed]")
    assert "ran out of disk" in page.locator("#stage-experiment").inner_text()
    badge = page.locator("li[data-stage=experiment] [data-part=status]")
    assert "bad" in badge.get_attribute("class")
    assert badge.evaluate("el => getComputedStyle(el).color") == "rgb(179, 38, 30)"  # var(--bad)
    sections = page.locator("#stage-sections > section")
    assert [sections.nth(i).get_attribute("id") for i in range(sections.count())] == ["stage-idea", "stage-experiment"]
    assert page.evaluate("window.notReloaded") is True

    page.goto(f"{live_url}/research/new/")
    assert page.locator("[data-field=given_idea]").is_hidden()  # end to end by default
    assert page.locator("[data-field=stage]").is_hidden()
    page.check("input[name=mode][value=stepwise]")
    assert page.locator("[data-field=given_idea]").is_visible() and page.locator("[data-field=stage]").is_visible()
    page.select_option("select[name=literature_provider]", "openai_search")
    assert (
        page.locator("[data-field=corpus]").is_hidden() and page.locator("[data-field=literature_model]").is_visible()
    )
    page.fill("#task-search", "bi_align")
    visible = page.locator("select[name=task] option:not([hidden])")
    assert [visible.nth(i).inner_text() for i in range(visible.count())][
        -1
    ] == "Bidirectional alignment · iclr2025_bi_align"
    assert page.locator("select[name=task]").input_value() == str(Task.objects.get(slug="iclr2025_bi_align").pk)
    assert page.locator("button.primary[type=submit]").inner_text() == "Launch"
