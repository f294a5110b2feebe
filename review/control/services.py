"""The campaign control room's actions beyond assignment: close and reopen, reminder mails, and
the inbox of open problem reports.

Closing is a status change recorded with who and when (CampaignStatusChange). A closed campaign
stays visible to its reviewers, read-only: services._writable refuses saves, the draft UPDATE
re-checks the status in the same statement (an autosave in flight when the campaign closes is
refused, not stored), and campaign_assign fills no slot.

Reminders carry only what the reviewer needs: their own count of open items, the due date and a
link to their queue; never item contents nor anyone else's name. At most one per reviewer per
campaign within REMIND_EVERY, counted from the rows of ReviewerReminder, which are claimed under
the campaign's row lock so two admins pressing the button at once send one mail, not two.

A member who was invited and never accepted cannot sign in to that queue: they get their
invitation again instead (a fresh link; only hashes are stored, so the old one cannot be resent),
claimed and rate-limited like a reminder, since two resends at once would leave the first mail's
link dead. Without a mail server (accounts.services.mail_configured, the invitations' own test)
nothing is mailed and nothing is recorded as sent: the result carries what would have gone, the
reminders' text and the invitations' new links, for the admin to pass on.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import Count, Max
from django.urls import reverse
from django.utils import timezone

from accounts.models import Invitation
from accounts.services import InvitationIssued, invitation_resend, mail_configured
from review.assignment.services import campaign_assign
from review.blinding import tells
from review.models import (
    Assignment,
    Campaign,
    CampaignReviewer,
    CampaignStatusChange,
    ItemReport,
    ReviewerReminder,
)

log = logging.getLogger(__name__)

REMIND_EVERY = timedelta(hours=12)


class ControlRefused(ValueError):
    """The action does not apply to the campaign as it is (closing a closed one, reminding in a closed one)."""


# ---------------------------------------------------------------- close and reopen


def _set_status(campaign: Campaign, to: str, by: Any, allowed_from: tuple[str, ...]) -> Campaign:
    with transaction.atomic():
        locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
        if locked.status not in allowed_from:
            raise ControlRefused(f"the campaign is {locked.get_status_display()}")
        CampaignStatusChange.objects.create(campaign=locked, from_status=locked.status, to_status=to, by=by)
        locked.status = to
        locked.save(update_fields=["status"])
    campaign.status = locked.status
    return locked


def campaign_close(*, campaign: Campaign, by: Any) -> Campaign:
    """Close: reviewers keep a read-only view; no save, no submit, no new assignment."""
    return _set_status(campaign, Campaign.Status.CLOSED, by, (Campaign.Status.OPEN, Campaign.Status.DRAFT))


def campaign_open(*, campaign: Campaign, by: Any, accept_tells: bool = False) -> Campaign:
    """Open a draft campaign to its reviewers (its assignments are made as before: plan, then assign).
    Refused while the campaign's tell check (review.blinding.tells) is stale or finds tells that cannot be
    hidden, unless the admin accepts them (`accept_tells`: the campaign page lists what is accepted)."""
    problem = tells.open_problems(campaign)
    if problem and not accept_tells:
        raise ControlRefused(problem)
    opened = _set_status(campaign, Campaign.Status.OPEN, by, (Campaign.Status.DRAFT,))
    if problem:  # the campaign page says who opened it over which tells (until the next check)
        tells.tells_accept(campaign=opened, by=by, problem=problem)
    return opened


def campaign_reopen(*, campaign: Campaign, by: Any) -> int:
    """Reopen a closed campaign; slots freed while it was closed (accepted reports) are filled now.
    Returns how many assignments that made."""
    _set_status(campaign, Campaign.Status.OPEN, by, (Campaign.Status.CLOSED,))
    return campaign_assign(campaign=campaign).created


def last_closes(campaign_ids: list[int]) -> dict[int, CampaignStatusChange]:
    """The latest close of each of these campaigns (when, and whether the control room or an import
    closed it: "closed on ... (imported)"); a campaign with no close on record is absent."""
    last: dict[int, CampaignStatusChange] = {}
    rows = CampaignStatusChange.objects.filter(campaign_id__in=campaign_ids, to_status=Campaign.Status.CLOSED)
    for change in rows.order_by("campaign_id", "-at", "-id"):
        last.setdefault(change.campaign_id, change)
    return last


def status_history(campaign: Campaign, limit: int = 10) -> list[CampaignStatusChange]:
    return list(campaign.status_changes.select_related("by")[:limit])


# ---------------------------------------------------------------- reminders


@dataclass
class UnsentReminder:
    """A reminder that was not sent (no mail server): who it was for and its text, for the admin."""

    username: str
    email: str
    subject: str
    body: str


@dataclass
class RemindResult:
    mailed: bool = True  # False: no mail server; nothing below was mailed
    sent: list[str] = field(default_factory=list)  # usernames mailed a reminder
    reinvited: list[InvitationIssued] = field(default_factory=list)  # invitees who had not accepted: a new link
    unsent: list[UnsentReminder] = field(default_factory=list)  # no mail server: what would have been mailed
    recent: list[str] = field(default_factory=list)  # reminded within REMIND_EVERY: skipped
    no_email: list[str] = field(default_factory=list)  # no address on the account
    revoked: list[str] = field(default_factory=list)  # invitee whose link an admin revoked: left alone
    failed: dict[str, str] = field(default_factory=dict)  # username -> the mail backend's error

    @property
    def nothing(self) -> bool:
        return not (
            self.sent or self.reinvited or self.unsent or self.recent or self.no_email or self.revoked or self.failed
        )


def _unaccepted(user_ids: list[int]) -> dict[int, Invitation]:
    """Per reviewer who was invited and never accepted (no invitation of theirs was ever used): their
    latest invitation. Reviewers made otherwise, or who accepted once, are absent."""
    latest: dict[int, Invitation] = {}
    accepted: set[int] = set()
    for inv in Invitation.objects.filter(user_id__in=user_ids).order_by("user_id", "-created_at", "-id"):
        latest.setdefault(inv.user_id, inv)
        if inv.used_at is not None:
            accepted.add(inv.user_id)
    return {uid: inv for uid, inv in latest.items() if uid not in accepted}


def open_work(campaign: Campaign) -> list[dict[str, Any]]:
    """Per reviewer with open assignments in the campaign: their count, when they were last reminded,
    and, for an invitee who has not accepted, their latest invitation (they get it again, not a reminder)."""
    rows = (
        Assignment.objects.filter(campaign=campaign, status__in=Assignment.OPEN)
        .values("reviewer_id", "reviewer__username", "reviewer__email")
        .annotate(open=Count("id"))
        .order_by("reviewer__username")
    )
    last = dict(
        ReviewerReminder.objects.filter(campaign=campaign)
        .values("reviewer_id")
        .annotate(last=Max("sent_at"))
        .values_list("reviewer_id", "last")
    )
    rows = list(rows)
    unaccepted = _unaccepted([row["reviewer_id"] for row in rows])
    return [
        {
            "reviewer_id": row["reviewer_id"],
            "username": row["reviewer__username"],
            "email": row["reviewer__email"],
            "open": row["open"],
            "last_reminded": last.get(row["reviewer_id"]),
            "invitation": unaccepted.get(row["reviewer_id"]),
        }
        for row in rows
    ]


def _reminder_text(campaign: Campaign, open_items: int) -> tuple[str, str]:
    due = f"due {campaign.deadline:%Y-%m-%d %H:%M} UTC" if campaign.deadline else "with no deadline set"
    items = "1 item" if open_items == 1 else f"{open_items} items"
    link = settings.SITE_URL.rstrip("/") + reverse("review:queue")
    subject = f"Referee: {items} to review in {campaign.name}"
    body = (
        f"You have {items} still open in the review campaign {campaign.name}, {due}.\n\n"
        f"Your queue: {link}\n\n"
        "Drafts are saved as you go; you can stop and continue at any time.\n"
    )
    return subject, body


def reminders_send(*, campaign: Campaign, by: Any = None, now: Any = None) -> RemindResult:
    """Remind every reviewer with open work in the open campaign, except those reminded within
    REMIND_EVERY; an invitee who has not accepted gets their invitation again instead. Without a
    mail server nothing is sent: `unsent` and `reinvited` (links to pass on) say what would have gone."""
    now = now or timezone.now()
    result = RemindResult(mailed=mail_configured())
    claimed: list[tuple[ReviewerReminder | None, dict[str, Any]]] = []
    with transaction.atomic():
        locked = Campaign.objects.select_for_update().get(pk=campaign.pk)
        if locked.status != Campaign.Status.OPEN:
            raise ControlRefused(f"the campaign is {locked.get_status_display()}: nobody is reminded")
        for row in open_work(locked):
            invitation = row["invitation"]
            if row["last_reminded"] and now - row["last_reminded"] < REMIND_EVERY:
                result.recent.append(row["username"])
            elif invitation is not None and invitation.state(now) == Invitation.State.REVOKED:
                result.revoked.append(row["username"])
            elif invitation is None and not row["email"]:
                result.no_email.append(row["username"])
            elif result.mailed:
                reminder = ReviewerReminder.objects.create(
                    campaign=locked, reviewer_id=row["reviewer_id"], open_items=row["open"], sent_by=by, sent_at=now
                )
                claimed.append((reminder, row))
            else:  # nothing is mailed, so nothing is recorded as sent (no claim, no "last reminded")
                claimed.append((None, row))
    # Mail outside the lock (an SMTP server may be slow); a failed mail gives its claim back.
    for reminder, row in claimed:
        try:
            _remind_one(locked, row, by, result)
        except Exception as exc:  # any backend error (SMTP, file system), or a refused resend: recorded
            log.warning("reminder to %s in campaign %s failed: %s", row["username"], locked.pk, exc)
            if reminder is not None:
                reminder.delete()
            result.failed[row["username"]] = str(exc) or type(exc).__name__
    return result


def member_invitation_resend(*, invitation: Invitation, by: Any = None) -> InvitationIssued:
    """Resend an invitation (a fresh link, mailed when a mail server is configured: accounts'
    invitation_resend) and move the campaign memberships tied to the old one to the new one, so
    that the campaign's column follows the link that works. A failed mail undoes both.

    Here rather than with the campaign's members (review.campaigns): a reminder to an invited
    member is this resend, and the members page's resend button (campaigns.views) imports it from
    below, so that control never imports campaigns, which shows the control room."""
    with transaction.atomic():
        issued = invitation_resend(invitation=invitation, by=by)
        CampaignReviewer.objects.filter(invitation=invitation).update(invitation=issued.invitation)
    return issued


def _remind_one(campaign: Campaign, row: dict[str, Any], by: Any, result: RemindResult) -> None:
    if row["invitation"] is not None:
        # The invitation mail when a server is configured; else a new link, shown to the admin once.
        result.reinvited.append(member_invitation_resend(invitation=row["invitation"], by=by))
        return
    subject, body = _reminder_text(campaign, row["open"])
    if not result.mailed:
        result.unsent.append(UnsentReminder(row["username"], row["email"], subject, body))
        return
    send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [row["email"]])
    result.sent.append(row["username"])


# ---------------------------------------------------------------- problem reports


def open_reports(campaign: Campaign) -> list[ItemReport]:
    return list(
        ItemReport.objects.filter(campaign=campaign, status=ItemReport.Status.OPEN)
        .select_related("assignment__reviewer", "assignment__item")
        .order_by("created_at", "id")
    )
