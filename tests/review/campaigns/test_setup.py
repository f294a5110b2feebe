"""Campaign set-up without the Django admin: add reviewers and items to a campaign (a running one
fills the new slots), the plan preview, preview as a reviewer, invitations in bulk tied to the
campaign, and the control room's open assignments (filter, sort, pages, reassign menu)."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from django.core import mail
from django.urls import reverse

from accounts.models import Invitation
from benchmark.models import Artifact
from review.assignment.services import campaign_assign
from review.blinding import blinded, scrubbing
from review.campaigns.services import campaign_create
from review.models import Assignment, Campaign
from tests.review.factories import make_paper, make_reviewer, make_rubric

pytestmark = pytest.mark.django_db


def _texts(response) -> str:
    return " ".join(str(m) for m in response.context["messages"]) if response.context else ""


@pytest.fixture
def empty_campaign() -> Campaign:
    """Created with items and no reviewers: the state in which 'Assign' answered '0 assignment(s) made'."""
    return campaign_create(
        name="empty",
        rubric=make_rubric(),
        artifacts=[make_paper(backbone="qwen") for _ in range(3)],
        reviewers_per_item=2,
    )


def test_it_says_why_nothing_is_assigned_and_assigns_once_reviewers_are_added(
    client_for, admin_user, empty_campaign
) -> None:
    c = client_for(admin_user)
    r = c.post(reverse("review:campaign_assign", args=[empty_campaign.code]), follow=True)
    assert "no active reviewers" in _texts(r)
    people = [make_reviewer(f"p{i}") for i in range(3)]
    page = c.get(reverse("review:campaign_detail", args=[empty_campaign.code])).content.decode()
    assert all(f'value="{p.pk}"' in page for p in people)  # the add-reviewers picker lists them
    r = c.post(
        reverse("review:campaign_members_add", args=[empty_campaign.code]), {"reviewers": [p.pk for p in people]},
        follow=True,
    )  # fmt: skip
    assert "3 reviewer(s) and 0 item(s) added" in _texts(r)
    assert not empty_campaign.assignments.exists()  # not begun: the admin previews the plan first
    r = c.post(reverse("review:campaign_assign", args=[empty_campaign.code]), follow=True)
    assert "6 assignment(s) made" in _texts(r) and empty_campaign.assignments.count() == 6


def test_it_fills_new_slots_when_reviewers_and_items_join_a_running_campaign(client_for, admin_user) -> None:
    first = [make_reviewer(f"q{i}") for i in range(2)]
    campaign = campaign_create(
        name="live", rubric=make_rubric(), artifacts=[make_paper(), make_paper()], reviewers=first, reviewers_per_item=2
    )
    campaign_assign(campaign=campaign)
    c = client_for(admin_user)
    new_papers = [make_paper(), make_paper()]
    r = c.post(
        reverse("review:campaign_items_add", args=[campaign.code]), {"artifacts": [p.pk for p in new_papers]},
        follow=True,
    )  # fmt: skip
    assert "0 reviewer(s) and 2 item(s) added" in _texts(r) and "4 new assignment(s)" in _texts(r)
    newcomer = make_reviewer("q_new")
    c.post(reverse("review:campaign_members_add", args=[campaign.code]), {"reviewers": [newcomer.pk]})
    # Invariants: k live per item, nobody twice on an item, every item covered.
    live = Assignment.objects.filter(campaign=campaign, status__in=Assignment.LIVE)
    per_item = Counter(live.values_list("item_id", flat=True))
    assert len(per_item) == 4 and set(per_item.values()) == {2}
    pairs = list(live.values_list("item_id", "reviewer_id"))
    assert len(pairs) == len(set(pairs))
    assert campaign.members.count() == 3  # the newcomer joined; every slot was full, so no new work for them
    idea = Artifact.objects.create(research_run=new_papers[0].research_run, stage=Artifact.Stage.IDEA, content="x")
    r = c.post(reverse("review:campaign_items_add", args=[campaign.code]), {"artifacts": [idea.pk]}, follow=True)
    assert "Items not added" in _texts(r) and campaign.items.count() == 4  # another stage is refused


def test_it_previews_the_plan_without_writing_and_applies_the_same(client_for, admin_user, empty_campaign) -> None:
    for i in range(3):
        empty_campaign.members.create(reviewer=make_reviewer(f"s{i}"))
    c = client_for(admin_user)
    r = c.get(reverse("review:campaign_plan", args=[empty_campaign.code]))
    assert r.status_code == 200 and not empty_campaign.assignments.exists()
    html = r.content.decode()
    assert "6 new assignment(s) for 3 reviewer(s) of 3" in html
    planned = Counter(re.findall(r"<td class=\"num\">\d+</td><td>(s\d)</td>", html))
    assert sum(planned.values()) == 6
    c.post(reverse("review:campaign_assign", args=[empty_campaign.code]))
    applied = Counter(empty_campaign.assignments.values_list("reviewer__username", flat=True))
    assert applied == planned


def test_it_previews_an_item_blinded_as_its_reviewers_see_it(client_for, admin_user, reviewer, empty_campaign) -> None:
    item = empty_campaign.items.first()
    item.artifact.content = "# Our qwen model\n\nQwen wrote this.\n\n![Loss](fig_loss.png)\n"
    item.artifact.save(update_fields=["content"])
    c = client_for(admin_user)
    r = c.get(reverse("review:item_preview", args=[empty_campaign.code, item.code]))
    html = r.content.decode()
    assert r.status_code == 200 and "Preview as a reviewer" in html and "Clarity" in html
    paper = html.split('aria-label="The item under review"', 1)[1].split("</article>", 1)[0]
    assert "qwen" not in paper.lower() and scrubbing.SCRUBBED in paper
    src = re.search(r'<img[^>]+src="([^"]+)"', paper).group(1)
    figure = c.get(src)
    assert figure.status_code == 200 and figure["Content-Type"] == "image/png"
    assert client_for(reviewer).get(src).status_code == 403
    assert c.get(src[:-3] + "abc").status_code == 404


def test_it_invites_in_bulk_into_the_campaign_keeping_the_good_lines(
    client_for, admin_user, researcher, empty_campaign
) -> None:
    c = client_for(admin_user)
    r = c.post(
        reverse("review:campaign_members_invite", args=[empty_campaign.code]),
        {"emails": f"ana@uni.edu nlp, RL\nnot-an-email\n{researcher.email}\nbo@lab.org", "expertise": "theory",
         "days": "3"},
        follow=True,
    )  # fmt: skip
    texts = _texts(r)
    assert "line 2: 'not-an-email' is not an email address" in texts
    assert f"Not invited: {researcher.email}" in texts  # an invitation may not add a role to an account
    assert "Invited ana@uni.edu" in texts and "Invited bo@lab.org" in texts and len(mail.outbox) == 2
    members = {m.reviewer.email: m for m in empty_campaign.members.select_related("reviewer", "invitation")}
    assert set(members) == {"ana@uni.edu", "bo@lab.org"}
    assert members["ana@uni.edu"].tags == ["nlp", "rl", "theory"] and members["bo@lab.org"].tags == ["theory"]
    assert members["ana@uni.edu"].invitation.is_pending
    html = c.get(reverse("review:campaign_detail", args=[empty_campaign.code])).content.decode()
    row = html.split("ana@uni.edu", 1)[1].split("</tr>", 1)[0]
    assert "nlp, rl, theory" in row and "pending" in row and "Resend" in row
    c.post(reverse("review:campaign_assign", args=[empty_campaign.code]))
    assert empty_campaign.assignments.count() == 6  # the invitees hold the slots before they accept


def test_it_shows_the_link_once_when_no_mail_server_is_configured(client_for, admin_user, settings) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
    c = client_for(admin_user)
    r = c.post(reverse("review:invitations"), {"emails": "cy@uni.edu", "days": "14"})
    html = r.content.decode()
    assert r.status_code == 200 and "no-cache" in r["Cache-Control"] and html.count("/accounts/invite/") == 1
    token = html.split("/accounts/invite/", 1)[1].split("/", 1)[0]
    assert Invitation.objects.get(email="cy@uni.edu").token_hash == Invitation.hash_token(token)
    assert token not in str(r.cookies)  # not in the messages cookie
    assert "send the link below yourself" in html
    assert token not in c.get(reverse("review:invitations")).content.decode()  # shown that once


def test_it_resends_and_revokes_from_the_invitations_page(client_for, admin_user, empty_campaign) -> None:
    c = client_for(admin_user)
    c.post(reverse("review:campaign_members_invite", args=[empty_campaign.code]), {"emails": "di@uni.edu", "days": "5"})
    first = Invitation.objects.get(email="di@uni.edu")
    page = c.get(reverse("review:invitations")).content.decode()
    assert "di@uni.edu" in page and "empty" in page  # tied to its campaign
    r = c.post(
        reverse("review:invitation_resend", args=[first.code]), {"campaign": str(empty_campaign.code)}, follow=True
    )
    assert r.redirect_chain[-1][0] == reverse("review:campaign_detail", args=[empty_campaign.code])
    first.refresh_from_db()
    second = Invitation.objects.exclude(pk=first.pk).get(email="di@uni.edu")
    assert first.state() == Invitation.State.REVOKED and second.is_pending
    assert empty_campaign.members.get().invitation == second  # the campaign's column follows the new link
    c.post(reverse("review:invitation_revoke", args=[second.code]))
    second.refresh_from_db()
    assert second.state() == Invitation.State.REVOKED
    r = c.post(reverse("review:invitation_revoke", args=[second.code]), follow=True)
    assert "Nothing revoked" in _texts(r)
    r = c.post(reverse("review:invitation_resend", args=[second.code]), {"campaign": "https://evil.example"})
    assert r["Location"] == reverse("review:invitations")  # never redirected off-site


def test_it_shows_a_revoked_invitee_as_revoked_with_their_open_items_to_reassign(
    client_for, admin_user, empty_campaign
) -> None:
    c = client_for(admin_user)
    for name in ("kim", "lou", "max"):
        empty_campaign.members.create(reviewer=make_reviewer(name))
    c.post(reverse("review:campaign_members_invite", args=[empty_campaign.code]), {"emails": "di@uni.edu", "days": "5"})
    invited = Invitation.objects.get(email="di@uni.edu")
    member = empty_campaign.members.get(invitation=invited)
    # A member whose name holds the invitee's: the link must not show their items too.
    namesake = make_reviewer(member.reviewer.get_username() + "x")
    empty_campaign.members.create(reviewer=namesake)
    campaign_assign(campaign=empty_campaign)
    held = Assignment.objects.filter(campaign=empty_campaign, reviewer=member.reviewer, status__in=Assignment.OPEN)
    assert held.count() >= 1, "the invitee got items before the revocation"
    url = reverse("review:campaign_detail", args=[empty_campaign.code])

    def row(html: str) -> str:
        table = html.split('id="reviewer-load"', 1)[1].split("</table>", 1)[0]
        return next(r for r in table.split("<tr>") if member.reviewer.get_username() in r)

    pending = row(c.get(url).content.decode())
    assert "revoked" not in pending and "until " in pending  # pending: nothing to flag yet, its expiry shown
    c.post(reverse("review:invitation_revoke", args=[invited.code]), {"campaign": str(empty_campaign.code)})
    html = c.get(url).content.decode()
    mine = row(html)
    assert "invitation revoked" in mine and "<td>yes</td>" not in mine
    assert "until " not in mine  # a revoked invitation has no expiry left to show (issue 33: "revoked until ...")
    again = campaign_assign(campaign=empty_campaign)  # a refill gives the revoked invitee nothing new, and says why
    assert "invitation was revoked" in again.refused[member.reviewer.get_username()]
    assert Assignment.objects.filter(campaign=empty_campaign, reviewer=member.reviewer).count() == held.count()
    link = re.search(r'<a class="nowrap revoked-open" href="([^"]+)">(\d+) open: reassign</a>', mine)
    assert link and int(link.group(2)) == held.count()
    # The link opens the open assignments filtered to this reviewer, each with the reassign form.
    page = c.get(url + link.group(1).replace("&amp;", "&")).content.decode()
    table = page.split('id="open-assignments"', 1)[1].split("</table>", 1)[0]
    for a in held:
        assert a.code in table and reverse("review:assignment_reassign", args=[empty_campaign.code, a.code]) in table
    theirs = Assignment.objects.filter(campaign=empty_campaign, reviewer=namesake, status__in=Assignment.OPEN)
    assert theirs.exists() and not any(a.code in table for a in theirs)
    # Once their items are submitted or moved on, the count goes and the badge stays.
    held.update(status=Assignment.Status.RETURNED)
    mine = row(c.get(url).content.decode())
    assert "invitation revoked" in mine and "open: reassign" not in mine


@pytest.fixture
def busy() -> dict:
    reviewers = [make_reviewer(f"b{i:02d}") for i in range(6)]
    campaign = campaign_create(
        name="busy", rubric=make_rubric(), artifacts=[make_paper() for _ in range(15)], reviewers=reviewers,
        reviewers_per_item=2,
    )  # fmt: skip
    campaign_assign(campaign=campaign)
    return {"campaign": campaign, "reviewers": reviewers}


def test_it_pages_filters_and_sorts_open_assignments(client_for, admin_user, busy) -> None:
    campaign = busy["campaign"]
    url = reverse("review:campaign_detail", args=[campaign.code])
    c = client_for(admin_user)
    html = c.get(url).content.decode()
    table = html.split('id="open-assignments"', 1)[1].split("</table>", 1)[0]
    assert "Open assignments (30)" in html and table.count("<tr><td>") == 25 and "page 1 of 2" in html
    assert table.count("<form") == 25 and table.count("<details") == 25  # behind a button, one page only
    page2 = c.get(url, {"page": 2}).content.decode().split('id="open-assignments"', 1)[1].split("</table>", 1)[0]
    assert page2.count("<tr><td>") == 5
    mine = c.get(url, {"q": "b03"}).content.decode().split('id="open-assignments"', 1)[1].split("</table>", 1)[0]
    assert mine.count("<tr><td>") == campaign.assignments.filter(reviewer__username="b03").count()
    assert set(re.findall(r"<td>(b\d\d)</td>", mine)) == {"b03"}
    by_item = c.get(url, {"sort": "-item"}).content.decode().split('id="open-assignments"', 1)[1]
    codes = re.findall(r'/preview">(i-[a-z0-9]+)</a>', by_item.split("</table>", 1)[0])
    assert codes == sorted(codes, reverse=True)
    assert c.get(url, {"sort": "password", "page": "x"}).status_code == 200  # junk falls back, no crash


def test_it_offers_only_other_free_members_in_the_reassign_menu(client_for, admin_user, busy) -> None:
    campaign = busy["campaign"]
    a = campaign.assignments.order_by("id").first()
    html = client_for(admin_user).get(reverse("review:campaign_detail", args=[campaign.code]), {"q": a.code})
    menu = html.content.decode().split(f'id="re-{a.code}"', 1)[1].split("</select>", 1)[0]
    offered = set(re.findall(r'<option value="(\d+)">', menu))
    holders = set(a.item.assignments.values_list("reviewer_id", flat=True))
    assert '<option value="" selected>' in menu  # nothing preselected, least of all the row's own reviewer
    assert offered == {str(r.pk) for r in busy["reviewers"] if r.pk not in holders}


def test_it_lists_only_the_chosen_stage_and_tags_each_row_with_its_stage(client_for, admin_user) -> None:
    paper = make_paper()
    idea = Artifact.objects.create(research_run=paper.research_run, stage=Artifact.Stage.IDEA, content="x")
    html = client_for(admin_user).get(reverse("review:campaign_create")).content.decode()
    assert f'value="{paper.pk}" data-stage="paper"' in html and f'name="artifacts" value="{idea.pk}"' not in html
    assert "data-candidate-all" in html and "data-candidate-search" in html


def test_it_invites_from_the_create_form(client_for, admin_user) -> None:
    r = client_for(admin_user).post(
        reverse("review:campaign_create"),
        {"name": "Invited study", "stage": "paper", "rubric": make_rubric().pk, "reviewers_per_item": 1,
         "reclaim_after_hours": 48, "status": "open", "artifacts": [make_paper().pk],
         "invite": "ed@uni.edu nlp", "invite_expertise": "vision"},
    )  # fmt: skip
    campaign = Campaign.objects.get(name="Invited study")
    assert r["Location"] == reverse("review:campaign_plan", args=[campaign.code])
    assert campaign.members.get().tags == ["nlp", "vision"]


# ---------------------------------------------------------------- the permission checklist


def _setup_urls(campaign: Campaign, invitation: Invitation) -> list[tuple[str, str]]:
    code, icode = campaign.code, campaign.items.first().code
    fid = blinded.figure_id(f"preview:{code}:{icode}", "results/fig_loss.png")
    return [
        ("get", reverse("review:campaign_plan", args=[code])),
        ("get", reverse("review:item_preview", args=[code, icode])),
        ("get", reverse("review:item_preview_figure", args=[code, icode, fid])),
        ("get", reverse("review:invitations")),
        ("post", reverse("review:invitations")),
        ("post", reverse("review:campaign_members_add", args=[code])),
        ("post", reverse("review:campaign_members_invite", args=[code])),
        ("post", reverse("review:campaign_items_add", args=[code])),
        ("post", reverse("review:invitation_resend", args=[invitation.code])),
        ("post", reverse("review:invitation_revoke", args=[invitation.code])),
    ]


@pytest.fixture
def invited(admin_user, empty_campaign) -> Invitation:
    from review.campaigns.setup import InviteLine, reviewers_invite

    reviewers_invite(lines=[InviteLine("fy@uni.edu", [])], campaign=empty_campaign, by=admin_user)
    return Invitation.objects.get(email="fy@uni.edu")


def test_it_gives_the_setup_pages_to_admins_only(
    client_for, admin_user, reviewer, researcher, empty_campaign, invited
) -> None:
    urls = _setup_urls(empty_campaign, invited)
    admin = client_for(admin_user)
    for method, url in urls:
        assert getattr(admin, method)(url).status_code in (200, 302, 400), url
    for user in (reviewer, researcher):
        c = client_for(user)
        for method, url in urls:
            assert getattr(c, method)(url).status_code == 403, (user, url)
    anonymous = client_for(None)
    for method, url in urls:
        r = getattr(anonymous, method)(url)
        assert r.status_code == 302 and r["Location"].startswith("/accounts/login/"), url
    # Writes refuse GET; bad codes are 404.
    for method, url in urls:
        if method == "post" and url != reverse("review:invitations"):
            assert admin.get(url).status_code == 405, url
    assert admin.post(reverse("review:campaign_plan", args=[empty_campaign.code])).status_code == 405
    nobody = "00000000-0000-0000-0000-000000000000"
    assert admin.get(reverse("review:campaign_plan", args=[nobody])).status_code == 404
    assert admin.get(reverse("review:item_preview", args=[empty_campaign.code, "i-nope"])).status_code == 404
    assert admin.post(reverse("review:invitation_resend", args=[nobody])).status_code == 404
    other = campaign_create(name="other", rubric=make_rubric(), artifacts=[make_paper()])
    icode = empty_campaign.items.first().code  # an item of another campaign under this campaign's code
    assert admin.get(reverse("review:item_preview", args=[other.code, icode])).status_code == 404


def test_it_matches_and_shows_the_expertise_an_account_gained_after_joining(
    client_for, admin_user, empty_campaign
) -> None:
    from accounts.models import Profile

    early = make_reviewer("early")  # the lower id: it would win a tie that expertise did not break
    late = make_reviewer("late")  # no expertise when added: the membership keeps none of its own
    member = empty_campaign.members.create(reviewer=late)
    assert member.expertise == []
    Profile.objects.filter(user=late).update(expertise=["graphs"])  # e.g. set when they accepted an invitation
    html = client_for(admin_user).get(reverse("review:campaign_detail", args=[empty_campaign.code])).content.decode()
    assert "graphs" in html.split('id="reviewer-load"', 1)[1].split("</table>", 1)[0]
    from review.assignment.services import _plan

    item = empty_campaign.items.first()
    item.tags = ["graphs"]
    item.save(update_fields=["tags"])
    empty_campaign.members.create(reviewer=early)  # loads tie: expertise decides
    empty_campaign.reviewers_per_item = 1
    empty_campaign.save(update_fields=["reviewers_per_item"])
    plan, _, _ = _plan(empty_campaign)
    assert next(a for a in plan if a.item_id == item.pk).reviewer_id == late.pk
