"""Websockets: whatever route a reviewer opens, no message names the system, the run or a score.

Every route of the project is tried with the reviewed item's run and artifact codes; the review
flow (draft, submit) runs meanwhile, and nothing that arrives may leak.
"""

from __future__ import annotations

import json
import re

import pytest
from asgiref.sync import sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from review.assignment.services import campaign_assign
from review.campaigns.services import campaign_create
from review.models import Assignment
from review.reviewing.services import review_save_draft, review_submit
from tests.review.factories import make_paper, make_rubric

pytestmark = pytest.mark.django_db(transaction=True)


def _world(reviewer):
    paper = make_paper(backbone="claude-3-7-sonnet", cost=4.5678)
    campaign = campaign_create(
        name="ws", rubric=make_rubric(), artifacts=[paper], reviewers=[reviewer], reviewers_per_item=1
    )
    campaign_assign(campaign=campaign)
    return paper, Assignment.objects.get(reviewer=reviewer)


def _paths(paper) -> list[str]:
    from config.routing import websocket_urlpatterns

    paths = []
    for pattern in websocket_urlpatterns:
        route = str(pattern.pattern)
        for code in (paper.research_run.code, paper.code):
            paths.append("/" + re.sub(r"<[^>]+>", str(code), route))
    return sorted(set(paths))


async def test_it_leaks_nothing_over_any_websocket_route(reviewer) -> None:
    from config.routing import websocket_urlpatterns

    paper, assignment = await sync_to_async(_world)(reviewer)
    forbidden = ["claude", "sonnet", str(paper.code), str(paper.research_run.code), "4.5678"]
    app = URLRouter(websocket_urlpatterns)
    opened = []
    for path in await sync_to_async(_paths)(paper):
        communicator = WebsocketCommunicator(app, path)
        communicator.scope["user"] = reviewer
        connected, _ = await communicator.connect()
        if connected:
            opened.append((path, communicator))
        else:
            await communicator.disconnect()
    await sync_to_async(review_save_draft)(
        assignment=assignment, scores={"overall": {"score": 4, "justification": "meh"}}, confidence=2, revision=1
    )
    await sync_to_async(review_submit)(
        assignment=assignment, scores={"overall": {"score": 5, "justification": "ok"}}, confidence=3
    )
    for path, communicator in opened:
        while not await communicator.receive_nothing(timeout=0.2):
            message = json.dumps(await communicator.receive_json_from()).lower()
            leaks = [s for s in forbidden if s.lower() in message]
            assert leaks == [], f"{path} sent {leaks}"
        await communicator.disconnect()
    # Only the reviewer's own notification channel may accept them; no run or research stream.
    assert [p for p, _ in opened if not p.startswith("/ws/me/")] == []
