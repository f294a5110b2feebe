"""Step notes: the permission checklist, validation that keeps the page, display and the side-file export."""

from __future__ import annotations

import json
import uuid

import pytest

from benchmark.models import Run, StepNote
from benchmark.runs import progress
from benchmark.runs.services import run_share, run_share_revoke
from tests.benchmark.runs_support import make_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(researcher):
    run = make_run(owner=researcher, status=Run.Status.FINISHED)
    progress.step_append(run=run, thought="t", action="ls\n", observation="a", publish=False)
    progress.step_append(run=run, thought="t", action="cat a\n", observation="b", publish=False)
    return run


def note_url(run: Run, index: int = 2) -> str:
    return f"/runs/{run.code}/steps/{index}/notes/"


def test_it_lets_everyone_who_sees_the_run_annotate_a_step(
    run, researcher, other_researcher, admin_user, reviewer, client_for
):
    body = {"body": "lr too high <script>x</script>", "tags": "Bug, insight, bug"}
    response = client_for(researcher).post(note_url(run), body)
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.code}/#step-2"
    note = StepNote.objects.get()
    assert note.step.index == 2 and note.author == researcher and note.tags == ["bug", "insight"]
    assert client_for(other_researcher).post(note_url(run), body).status_code == 404  # not theirs to see
    assert client_for(reviewer).post(note_url(run), body).status_code == 403
    anonymous = client_for(None).post(note_url(run), body)
    assert anonymous.status_code == 302 and "/accounts/login" in anonymous["Location"]
    assert client_for(researcher).get(note_url(run)).status_code == 405
    assert client_for(researcher).post(f"/runs/{uuid.uuid4()}/steps/2/notes/", body).status_code == 404
    assert client_for(researcher).post(note_url(run, 99), body).status_code == 404
    run_share(run=run, user=other_researcher)
    assert client_for(other_researcher).post(note_url(run), {"body": "seen"}).status_code == 302
    assert client_for(admin_user).post(note_url(run), {"body": "admin"}).status_code == 302
    run_share_revoke(run=run, user=other_researcher)
    assert client_for(other_researcher).post(note_url(run), {"body": "late"}).status_code == 403
    assert StepNote.objects.count() == 3


def test_it_shows_notes_to_the_runs_viewers_escaped(run, researcher, other_researcher, client_for):
    client_for(researcher).post(note_url(run), {"body": "lr too high <script>x</script>", "tags": "bug"})
    run_share(run=run, user=other_researcher)
    page = client_for(other_researcher).get(f"/runs/{run.code}/").content.decode()
    start = page.index('id="step-notes"')
    data = json.loads(page[page.index(">", start) + 1 : page.index("</script>", start)])
    (note,) = data["2"]
    assert note["body"] == "lr too high <script>x</script>" and note["author"] == researcher.username
    assert note["tags"] == ["bug"] and note["can_delete"] is False  # not the author nor the owner
    assert "<script>x</script>" not in page


def test_it_refuses_a_bad_note_and_says_why(run, researcher, client_for):
    client = client_for(researcher)
    empty = client.post(note_url(run), {"body": "  ", "tags": ""}, follow=True).content.decode()
    assert "The note was not saved" in empty and "body" in empty
    bad_tag = client.post(note_url(run), {"body": "ok", "tags": "fine, not a tag!"}, follow=True).content.decode()
    assert "not a tag!" in bad_tag and "1-30 letters" in bad_tag
    too_long = client.post(note_url(run), {"body": "x" * 4001}, follow=True).content.decode()
    assert "The note was not saved" in too_long
    assert not StepNote.objects.exists()


def test_it_lets_the_author_owner_or_admin_delete_a_note(
    run, researcher, other_researcher, admin_user, reviewer, client_for
):
    run_share(run=run, user=other_researcher)
    client_for(other_researcher).post(note_url(run), {"body": "by the viewer"})
    client_for(researcher).post(note_url(run), {"body": "by the owner"})
    by_viewer, by_owner = StepNote.objects.order_by("id")

    def delete(user, note: StepNote) -> int:
        return client_for(user).post(f"/runs/{run.code}/notes/{note.code}/delete/").status_code

    assert delete(other_researcher, by_owner) == 403  # a viewer deletes only their own
    assert delete(reviewer, by_owner) == 403
    assert delete(None, by_owner) == 302 and StepNote.objects.count() == 2
    assert client_for(researcher).get(f"/runs/{run.code}/notes/{by_owner.code}/delete/").status_code == 405
    assert client_for(researcher).post(f"/runs/{run.code}/notes/{uuid.uuid4()}/delete/").status_code == 404
    other_run = make_run(owner=researcher)
    assert client_for(researcher).post(f"/runs/{other_run.code}/notes/{by_owner.code}/delete/").status_code == 404
    assert delete(other_researcher, by_viewer) == 302
    assert delete(researcher, by_owner) == 302
    client_for(other_researcher).post(note_url(run), {"body": "again"})
    assert delete(admin_user, StepNote.objects.get()) == 302
    assert not StepNote.objects.exists()


def test_it_exports_notes_beside_the_traj_not_inside_it(run, researcher, other_researcher, reviewer, client_for):
    client_for(researcher).post(note_url(run, 1), {"body": "first look", "tags": "setup"})
    response = client_for(researcher).get(f"/runs/{run.code}/notes.json")
    assert response.status_code == 200 and ".notes.json" in response["Content-Disposition"]
    data = json.loads(response.content)
    assert data["format"] == "referee-step-notes/1" and data["run"] == str(run.code)
    assert [(n["step"], n["body"], n["tags"]) for n in data["notes"]] == [(1, "first look", ["setup"])]
    traj = client_for(researcher).get(f"/runs/{run.code}/export.traj").content.decode()
    assert "first look" not in traj
    assert client_for(other_researcher).get(f"/runs/{run.code}/notes.json").status_code == 404
    assert client_for(reviewer).get(f"/runs/{run.code}/notes.json").status_code == 403
    assert client_for(None).get(f"/runs/{run.code}/notes.json").status_code == 302
    assert client_for(researcher).post(f"/runs/{run.code}/notes.json").status_code == 405
    assert client_for(researcher).get(f"/runs/{uuid.uuid4()}/notes.json").status_code == 404
