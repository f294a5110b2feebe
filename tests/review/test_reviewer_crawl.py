"""A reviewer, signed in through the login form, crawls everything reachable from their home page
in a campaign over all released MLR-Bench papers: every page, figure and supplementary file. No
response may name a system, keep a model's preamble or sign-off, or carry a judge's verdict.

The checks do not reuse the scrubber's own pattern (a bug there would hide its own leaks): they
look for the names and phrases as plain, case-insensitive text.
"""

from __future__ import annotations

import io
import re
from collections import deque
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlparse

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client

from benchmark.models import Artifact, ResearchRun
from judge.models import Judgment
from review.models import Assignment
from review.services import campaign_assign, campaign_create
from tests.review.factories import make_reviewer

MLRBENCH = Path(settings.MLRBENCH_DIR or Path(settings.BASE_DIR).parent / "shared" / "mlrbench")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db,
    pytest.mark.skipif(
        not (MLRBENCH / "agent_results").is_dir(), reason=f"MLR-Bench data not found at {MLRBENCH} (set MLRBENCH_DIR)"
    ),
]

# Every spelling of the three backbones, their makers, and the released runs' coding agent.
NAMES = re.compile(r"(?i)claude|anthropic|gemini|openai|sonnet|o4-mini|o4_mini|o4mini")
PREAMBLES = re.compile(
    r"(?i)here is the (?:machine learning project |research )?paper|i will now proceed|here is a literature review"
    r"|here is (?:a|the) (?:detailed )?research proposal|i hope this helps|let me know if"
    r"|added references for deep sets"  # the closing note of one released paper
)


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if key in ("href", "src") and value:
                self.urls.append(value)


def _verdicts() -> list[str]:
    """Distinctive snippets of what the judges wrote about these papers."""
    snippets = []
    for judgment in Judgment.objects.filter(artifact__stage=Artifact.Stage.PAPER):
        for entry in (judgment.scores or {}).values():
            if isinstance(entry, dict):
                for key in ("justification", "strengths", "weaknesses"):
                    text = entry.get(key)
                    text = " ".join(text) if isinstance(text, list) else text
                    if isinstance(text, str) and len(text.strip()) >= 60:
                        snippets.append(text.strip()[:60])
    return snippets


@pytest.fixture
def released_campaign(db, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("import_mlr_results", str(MLRBENCH), stdout=io.StringIO())
    papers = list(Artifact.objects.filter(stage=Artifact.Stage.PAPER, research_run__source=ResearchRun.Source.MLRBENCH))
    assert len(papers) == 30
    reviewer = make_reviewer("crawler", password="crawl-Secret-81")
    campaign = campaign_create(
        name="released", rubric=Judgment.objects.first().rubric, artifacts=papers, reviewers=[reviewer],
        reviewers_per_item=1, show_supplementary=True,
    )  # fmt: skip
    assert campaign_assign(campaign=campaign).created == 30
    return campaign


def test_it_finds_no_system_name_no_preamble_and_no_verdict_anywhere_a_reviewer_can_go(released_campaign):
    client = Client()
    login = client.post("/accounts/login/", {"username": "crawler", "password": "crawl-Secret-81"})
    assert login.status_code == 302
    verdicts = _verdicts()
    assert len(verdicts) > 100  # the judges' reviews are in the database, so their absence means something
    seen: set[str] = set()
    queue = deque(["/"])
    leaks: list[str] = []
    kinds = {"item": 0, "figure": 0, "supplementary": 0}
    while queue:
        url = queue.popleft()
        if url in seen:
            continue
        seen.add(url)
        response = client.get(url, follow=True)
        if url == "/healthz":  # 503 without workers: either way a reviewer learns only up or down
            assert set(response.json()) == {"ok"}
            continue
        assert response.status_code == 200, f"{url}: {response.status_code}"
        content_type = response["Content-Type"]
        if "/f/" in url:
            kinds["figure"] += 1
            assert content_type.startswith("image/")
            assert NAMES.search(str(dict(response.headers))) is None
            continue
        body = response.content.decode("utf-8", errors="replace")
        if "/s/" in url:
            kinds["supplementary"] += 1
        elif re.fullmatch(r"/review/a/[a-z0-9]+/", url):
            kinds["item"] += 1
        for pattern, what in ((NAMES, "system name"), (PREAMBLES, "model chatter")):
            for m in pattern.finditer(body):
                leaks.append(f"{url}: {what} {body[max(0, m.start() - 40) : m.end() + 40]!r}")
        leaks += [f"{url}: judge verdict {v!r}" for v in verdicts if v in body]
        if not content_type.startswith("text/html"):
            continue
        parser = Links()
        parser.feed(body)
        for link in parser.urls:
            target = urldefrag(urljoin(url, link))[0]
            parsed = urlparse(target)
            if parsed.netloc not in ("", "testserver") or parsed.path.startswith(("/static/", "/accounts/logout")):
                continue
            queue.append(parsed.path + (f"?{parsed.query}" if parsed.query else ""))
    assert leaks == [], "\n".join(leaks)
    # The crawl reached every item, its figures and its supplementary files.
    assert kinds["item"] == Assignment.objects.count() == 30
    assert kinds["figure"] >= 30 and kinds["supplementary"] >= 60
