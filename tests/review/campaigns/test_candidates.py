"""The new-campaign form's candidate items: one page of the chosen stage, searched and paged by the
server (the form page no longer carries a checkbox per finished item of every stage), the stage's
rubric chosen by default, and the POST contract kept (a pick of another stage refused and named,
the valid picks kept checked on the re-shown form)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from benchmark.models import Artifact, Run
from judge.models import Rubric
from review.campaigns.candidates import PAGE_SIZE
from review.models import TRAJECTORY, Campaign
from tests.review.factories import make_paper, make_rubric
from tests.review.trajectory_factories import make_run, trajectory_rubric

pytestmark = pytest.mark.django_db

CANDIDATES = reverse("review:campaign_candidates")
NEW = reverse("review:campaign_create")


def _idea(paper: Artifact) -> Artifact:
    return Artifact.objects.create(research_run=paper.research_run, stage=Artifact.Stage.IDEA, content="an idea")


def test_it_gives_the_candidates_to_admins_only_and_reads_only(client_for, admin_user, researcher, reviewer) -> None:
    paper = make_paper()
    url = f"{CANDIDATES}?stage=paper"
    ok = client_for(admin_user).get(url)
    assert ok.status_code == 200 and f'value="{paper.pk}"' in ok.content.decode()
    for user in (researcher, reviewer):
        r = client_for(user).get(url)
        assert r.status_code == 403 and f'value="{paper.pk}"' not in r.content.decode()
    anonymous = client_for(None).get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    admin = client_for(admin_user)
    for method in ("post", "put", "delete"):
        assert getattr(admin, method)(url).status_code == 405
    bad = admin.get(f"{CANDIDATES}?stage=nonsense")
    assert bad.status_code == 400 and "Unknown stage" in bad.content.decode()
    assert admin.get(CANDIDATES).status_code == 400
    assert not Campaign.objects.exists()


def test_it_pages_and_searches_the_chosen_stage_only(client_for, admin_user) -> None:
    papers = [make_paper(slug=f"iclr_vision_{i:02d}") for i in range(PAGE_SIZE + 3)]
    speech = make_paper(slug="iclr_speech_z", backbone="gemini")
    idea = _idea(speech)
    admin = client_for(admin_user)
    first = admin.get(f"{CANDIDATES}?stage=paper").content.decode()
    assert first.count('name="artifacts"') == PAGE_SIZE and f'value="{idea.pk}"' not in first
    assert f"{PAGE_SIZE + 4} paper item(s), page 1 of 2" in first and "page=2" in first
    second = admin.get(f"{CANDIDATES}?stage=paper&page=2").content.decode()
    assert second.count('name="artifacts"') == 4 and "Previous" in second and "Next" not in second
    shown = {int(v) for v in __import__("re").findall(r'value="(\d+)"', first + second)}
    assert shown == {p.pk for p in [*papers, speech]}
    found = admin.get(f"{CANDIDATES}?stage=paper&q=SPEECH").content.decode()
    assert found.count('name="artifacts"') == 1 and f'value="{speech.pk}"' in found
    assert admin.get(f"{CANDIDATES}?stage=paper&q=gemini").content.decode().count('name="artifacts"') == 1
    none = admin.get(f"{CANDIDATES}?stage=paper&q=nomatch").content.decode()
    assert 'No paper item matches "nomatch"' in none
    ideas = admin.get(f"{CANDIDATES}?stage=idea").content.decode()
    assert ideas.count('name="artifacts"') == 1 and f'value="{idea.pk}"' in ideas
    # A page past the end shows the last one, not an error.
    assert admin.get(f"{CANDIDATES}?stage=paper&page=99").content.decode().count('name="artifacts"') == 4


def test_it_lists_finished_runs_under_the_trajectory_stage(client_for, admin_user) -> None:
    done, running = make_run(), make_run(model="openai:gpt-4o", agent_name="GptAgent")
    Run.objects.filter(pk=running.pk).update(status=Run.Status.RUNNING)
    paper = make_paper()
    page = client_for(admin_user).get(f"{CANDIDATES}?stage={TRAJECTORY}").content.decode()
    assert f'name="runs" value="{done.pk}"' in page and f'value="{running.pk}"' not in page
    assert (
        'name="artifacts"' not in page
        and f"trajectory: {done.task.slug}" in page
        and paper.research_run.task.slug not in page
    )


def test_it_renders_one_page_of_the_stage_with_its_rubric_and_no_other_box(client_for, admin_user) -> None:
    for i in range(PAGE_SIZE + 10):
        make_paper(slug=f"iclr_many_{i:02d}")
    run = make_run()
    make_rubric()
    paper_rubric_new = make_rubric(version=2)
    traj = trajectory_rubric()
    admin = client_for(admin_user)
    html = admin.get(NEW).content.decode()
    assert html.count('name="artifacts"') == PAGE_SIZE and 'name="runs"' not in html
    assert f'<option value="{paper_rubric_new.pk}" selected>' in html
    traj_html = admin.get(f"{NEW}?stage={TRAJECTORY}").content.decode()
    assert f'name="runs" value="{run.pk}"' in traj_html and 'name="artifacts"' not in traj_html
    assert f'<option value="{traj.pk}" selected>' in traj_html
    assert f'<option value="{TRAJECTORY}" selected>' in traj_html
    # Without script: the search is a GET of this page, paged by links.
    found = admin.get(f"{NEW}?stage=paper&q=many_0").content.decode()
    assert found.count('name="artifacts"') == 10 and 'value="many_0"' in found
    assert f"{NEW}?stage=paper&amp;page=2" in html


def test_it_chooses_the_default_version_of_the_stage_rubric_first(client_for, admin_user) -> None:
    make_paper()
    old = make_rubric()
    make_rubric(version=2)
    Rubric.objects.filter(pk=old.pk).update(is_default=True)
    html = client_for(admin_user).get(NEW).content.decode()
    assert f'<option value="{old.pk}" selected>' in html


def test_it_creates_a_campaign_from_picks_and_keeps_the_valid_ones_when_one_is_refused(client_for, admin_user) -> None:
    papers = [make_paper(slug=f"iclr_post_{i:02d}") for i in range(PAGE_SIZE + 2)]
    idea = _idea(papers[0])
    far = papers[-1]  # on the second page of candidates: kept on the re-shown form all the same
    base = {"name": "Posted study", "stage": "paper", "rubric": make_rubric().pk, "reviewers_per_item": 1,
            "reclaim_after_hours": 48, "status": "draft"}  # fmt: skip
    admin = client_for(admin_user)
    wrong = admin.post(NEW, {**base, "artifacts": [papers[0].pk, far.pk, idea.pk]})
    html = wrong.content.decode()
    assert wrong.status_code == 400 and "1 selected item(s) are not of stage paper" in html
    assert f'value="{papers[0].pk}" data-stage="paper" checked' in html
    assert f'value="{far.pk}" data-stage="paper" checked' in html and f'name="artifacts" value="{idea.pk}"' not in html
    assert 'value="Posted study"' in html and not Campaign.objects.exists()
    made = admin.post(NEW, {**base, "artifacts": [papers[0].pk, far.pk]})
    campaign = Campaign.objects.get(name="Posted study")
    assert made.status_code == 302 and made["Location"] == reverse("review:campaign_plan", args=[campaign.code])
    assert set(campaign.items.values_list("artifact_id", flat=True)) == {papers[0].pk, far.pk}
