"""The permission checklist for every review view: owner, other reviewer, researcher, admin, anonymous, bad code, wrong method."""

from __future__ import annotations

import json

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from review.assignment.services import campaign_assign
from review.blinding import blinded
from review.campaigns.services import campaign_create
from review.models import Assignment, Campaign
from tests.review.factories import make_paper, make_reviewer, make_rubric

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(reviewer):
    other = make_reviewer("olga")
    campaign = campaign_create(
        name="perm", rubric=make_rubric(), artifacts=[make_paper(extra_files={"log.txt": "hi"})],
        reviewers=[reviewer, other], show_supplementary=True,
    )  # fmt: skip
    campaign_assign(campaign=campaign)
    mine = Assignment.objects.get(reviewer=reviewer)
    return {"campaign": campaign, "mine": mine, "theirs": Assignment.objects.get(reviewer=other)}


def _reviewer_urls(a: Assignment) -> dict[str, str]:
    fig = blinded.figure_id(a.code, "results/fig_loss.png")
    return {
        "item": reverse("review:item", args=[a.code]),
        "figure": reverse("review:figure", args=[a.code, fig]),
    }


def test_it_lets_the_assigned_reviewer_in(client_for, reviewer, world) -> None:
    c = client_for(reviewer)
    for name, url in _reviewer_urls(world["mine"]).items():
        assert c.get(url).status_code == 200, name
    assert c.get(reverse("review:queue")).status_code == 200


def test_it_answers_404_for_another_reviewers_code_and_for_bad_codes(client_for, reviewer, world) -> None:
    c = client_for(reviewer)
    for url in _reviewer_urls(world["theirs"]).values():
        assert c.get(url).status_code == 404
    assert c.get(reverse("review:item", args=["nosuchcode"])).status_code == 404
    assert c.get(reverse("review:figure", args=[world["mine"].code, "0" * 20])).status_code == 404
    assert c.get(reverse("review:supplementary", args=[world["mine"].code, "0" * 20])).status_code == 404
    draft = c.post(reverse("review:draft", args=[world["theirs"].code]), json.dumps({"revision": 1, "scores": {}}),
                   content_type="application/json")  # fmt: skip
    assert draft.status_code == 404


def test_it_hides_assignments_of_draft_campaigns_and_reclaimed_ones(client_for, reviewer, world) -> None:
    c = client_for(reviewer)
    url = reverse("review:item", args=[world["mine"].code])
    Campaign.objects.update(status=Campaign.Status.DRAFT)
    assert c.get(url).status_code == 404
    Campaign.objects.update(status=Campaign.Status.OPEN)
    Assignment.objects.filter(pk=world["mine"].pk).update(status=Assignment.Status.RECLAIMED)
    assert c.get(url).status_code == 404


@pytest.mark.parametrize("persona", ["researcher", "admin_user"])
def test_it_refuses_reviewer_pages_to_other_roles(client_for, world, persona, request) -> None:
    c = client_for(request.getfixturevalue(persona))
    for url in [*_reviewer_urls(world["mine"]).values(), reverse("review:queue")]:
        assert c.get(url).status_code == 403


def test_it_sends_anonymous_users_to_the_login_page(client_for, world) -> None:
    c = client_for(None)
    for url in [*_reviewer_urls(world["mine"]).values(), reverse("review:queue"), reverse("review:campaign_list"),
                reverse("review:campaign_detail", args=[world["campaign"].code])]:  # fmt: skip
        r = c.get(url)
        assert r.status_code == 302 and "/accounts/login" in r["Location"]


def test_it_refuses_wrong_methods(client_for, reviewer, admin_user, world) -> None:
    c = client_for(reviewer)
    a = world["mine"]
    assert c.get(reverse("review:draft", args=[a.code])).status_code == 405
    assert c.get(reverse("review:submit", args=[a.code])).status_code == 405
    assert c.post(reverse("review:queue")).status_code == 405
    assert c.post(_reviewer_urls(a)["figure"]).status_code == 405
    admin = client_for(admin_user)
    assert admin.get(reverse("review:campaign_assign", args=[world["campaign"].code])).status_code == 405
    assert admin.get(reverse("review:campaign_reclaim", args=[world["campaign"].code])).status_code == 405


def _admin_urls(world) -> list[tuple[str, str]]:
    code = world["campaign"].code
    return [
        ("get", reverse("review:campaign_list")),
        ("get", reverse("review:campaign_create")),
        ("get", reverse("review:campaign_detail", args=[code])),
        ("get", reverse("review:campaign_export", args=[code, "csv"])),
        ("get", reverse("review:campaign_export", args=[code, "json"])),
        ("post", reverse("review:campaign_assign", args=[code])),
        ("post", reverse("review:campaign_reclaim", args=[code])),
        ("post", reverse("review:campaign_reblind", args=[code])),
        ("post", reverse("review:assignment_reassign", args=[code, world["mine"].code])),
        ("post", reverse("review:conflict_add", args=[code])),
    ]


def test_it_gives_admins_the_campaign_pages(client_for, admin_user, world) -> None:
    c = client_for(admin_user)
    for method, url in _admin_urls(world):
        assert getattr(c, method)(url).status_code in (200, 302), url
    assert c.get(reverse("review:campaign_detail", args=["00000000-0000-0000-0000-000000000000"])).status_code == 404
    assert c.get(f"/review/campaigns/{world['campaign'].code}/export.xml").status_code == 404


@pytest.mark.parametrize("persona", ["reviewer", "researcher"])
def test_it_refuses_campaign_pages_to_non_admins(client_for, world, persona, request) -> None:
    c = client_for(request.getfixturevalue(persona))
    for method, url in _admin_urls(world):
        assert getattr(c, method)(url).status_code == 403, url


def _plain_named_urls() -> list[str]:
    """Every named URL of the project that takes no argument."""
    out = []

    def walk(patterns, prefix: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, f"{prefix}{p.namespace}:" if p.namespace else prefix)
            elif isinstance(p, URLPattern) and p.name and not p.pattern.regex.groupindex:
                out.append(prefix + p.name)

    walk(get_resolver().url_patterns, "")
    return sorted(set(out))


REVIEWER_MAY_OPEN = {"home", "healthz", "review:queue"}


def test_it_keeps_reviewers_out_of_every_admin_and_research_page(client_for, reviewer, world) -> None:
    c = client_for(reviewer)
    opened = []
    for name in _plain_named_urls():
        if name in REVIEWER_MAY_OPEN or name.startswith("accounts:") or name.endswith(("logout", "login")):
            continue
        try:
            url = reverse(name)
        except Exception:
            continue
        r = c.get(url)
        if r.status_code == 200:
            opened.append(name)
        elif r.status_code == 302:
            assert "login" in r["Location"], (name, r["Location"])
    assert opened == []


def _code_urls(codes: list[str]) -> list[tuple[str, str]]:
    """Every project URL whose only arguments are codes, filled with each of `codes`."""
    out = []

    def walk(patterns, prefix: str) -> None:
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, f"{prefix}{p.namespace}:" if p.namespace else prefix)
            elif isinstance(p, URLPattern) and p.name and p.pattern.regex.groupindex:
                names = list(p.pattern.regex.groupindex)
                for code in codes:
                    try:
                        out.append((prefix + p.name, reverse(prefix + p.name, kwargs=dict.fromkeys(names, code))))
                    except Exception:
                        continue

    walk(get_resolver().url_patterns, "")
    return out


def test_it_keeps_reviewers_out_of_the_run_behind_their_item(client_for, reviewer, world) -> None:
    """Knowing (or guessing) the run's, the artifact's or the task's code opens no research or admin page."""
    artifact = world["mine"].item.artifact
    codes = [str(artifact.research_run.code), str(artifact.code), str(artifact.research_run.task.code)]
    c = client_for(reviewer)
    opened = []
    for name, url in _code_urls(codes):
        if name.startswith("review:") or name.startswith("accounts:"):
            continue
        r = c.get(url)
        if r.status_code == 200:
            opened.append(url)
        elif r.status_code == 302:
            assert "login" in r["Location"], (name, r["Location"])
    assert opened == []
