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
from review.assignment.services import campaign_assign
from review.campaigns.services import campaign_create
from review.models import Assignment
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


def _crawl(client: Client, verdicts: list[str], names: re.Pattern[str] = NAMES, extra: tuple = ()) -> tuple[list, dict]:
    """Every page, figure, file and JSON reachable from the reviewer's home: (leaks, count per kind).

    `extra`: more (pattern, what) pairs that no response may contain."""
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
            assert names.search(str(dict(response.headers))) is None
            continue
        body = response.content.decode("utf-8", errors="replace")
        if "/s/" in url:
            kinds["supplementary"] += 1
        elif re.fullmatch(r"/review/a/[a-z0-9]+/", url):
            kinds["item"] += 1
        for pattern, what in ((names, "system name"), (PREAMBLES, "model chatter"), *extra):
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
    return leaks, kinds


def test_it_finds_no_system_name_no_preamble_and_no_verdict_anywhere_a_reviewer_can_go(released_campaign):
    client = Client()
    login = client.post("/accounts/login/", {"username": "crawler", "password": "crawl-Secret-81"})
    assert login.status_code == 302
    verdicts = _verdicts()
    assert len(verdicts) > 100  # the judges' reviews are in the database, so their absence means something
    leaks, kinds = _crawl(client, verdicts)
    assert leaks == [], "\n".join(leaks)
    # The crawl reached every item, its figures and its supplementary files.
    assert kinds["item"] == Assignment.objects.count() == 30
    assert kinds["figure"] >= 30 and kinds["supplementary"] >= 60


MLGYM = (
    Path(settings.MLGYM_DIR or Path(settings.BASE_DIR).parent / "shared" / "mlgym") / "trajectories" / "mlgym_bench_v0"
)
# The three models whose released runs come with their .traj, and MLGym's own agent label.
TRAJ_MODELS = ("claude-35-sonnet-new", "gemini-15-pro", "gpt4o2")
TRAJ_NAMES = re.compile(NAMES.pattern + r"|gpt-?4|metagen")


@pytest.mark.shared_data(MLGYM)
def test_it_finds_no_model_agent_run_code_cost_or_verdict_in_a_trajectory_campaign(db, settings, tmp_path):
    """Released MLGym runs of three models on one task, reviewed as trajectories: nothing reachable
    names the model or agent, carries a run's code, folder or cost, or a judge's verdict."""
    from benchmark.runs.trajectories import traj_import
    from review.models import TRAJECTORY
    from tests.review.trajectory_factories import trajectory_rubric

    settings.MEDIA_ROOT = tmp_path / "media"
    runs = []
    for model in TRAJ_MODELS:
        folder = f"metagen-{model}__battleOfSexes__default__t-0.00__p-0.95__c-4.00__install-0__parallel_agents_run_0"
        runs.append(traj_import(MLGYM / folder / "battleOfSexes.traj", create_task=True)[0])
    # The released steps of this task never name their model: make each run's first output do so (an
    # agent printing its own config), with its run code and recorded cost, as the scrubber must expect.
    for run in runs:
        step = run.steps.get(index=1)
        step.observation += f'\nagent {run.agent.name} (metagen) run {run.code} "total_cost": {run.cost}'
        step.thought = f"I am {run.agent.model}. " + step.thought
        step.save(update_fields=["observation", "thought"])
    rubric = trajectory_rubric()
    verdicts = []
    for run in runs:
        text = f"JUDGE-ONLY verdict on {run.code}: the agent repeated its strategy edit without validating it"
        Judgment.objects.create(run=run, rubric=rubric, judge_model="openai:gpt-4o", status="succeeded",
                                scores={"overall": {"score": 4, "justification": text}})  # fmt: skip
        verdicts.append(text[:60])
    reviewer = make_reviewer("trajcrawler", password="crawl-Secret-82")
    campaign = campaign_create(name="released trajectories", rubric=rubric, stage=TRAJECTORY, artifacts=[],
                               runs=runs, reviewers=[reviewer], reviewers_per_item=1)  # fmt: skip
    assert campaign_assign(campaign=campaign).created == 3
    identifiers = [str(r.code) for r in runs] + [str(r.agent.code) for r in runs]
    identifiers += [r.params["mlgym_folder"] for r in runs] + [f"{r.cost}" for r in runs if len(f"{r.cost}") >= 5]
    ids = re.compile("|".join(re.escape(i) for i in identifiers), re.IGNORECASE)
    client = Client()
    assert (
        client.post("/accounts/login/", {"username": "trajcrawler", "password": "crawl-Secret-82"}).status_code == 302
    )
    leaks, kinds = _crawl(client, verdicts, names=TRAJ_NAMES, extra=((ids, "run identifier or cost"),))
    assert leaks == [], "\n".join(leaks[:40])
    assert kinds["item"] == 3
    # The crawl saw the steps themselves, not an empty page: every step of every run was on an item page.
    page = client.get(f"/review/a/{Assignment.objects.first().code}/").content.decode()
    assert page.count('class="trajectory-step"') == Assignment.objects.first().item.run.step_count > 0
    # The draft endpoint answers only what was stored (the revision), nothing of the item.
    reply = client.post(f"/review/a/{Assignment.objects.first().code}/draft", '{"revision": 1, "scores": {}}',
                        content_type="application/json")  # fmt: skip
    assert set(reply.json()) == {"revision", "saved_at"}
