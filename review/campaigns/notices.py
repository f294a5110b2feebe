"""The messages admin pages show after an assignment, an invitation or reminders: what was done, what was
refused and why."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers

from review.assignment.services import AssignResult
from review.campaigns.setup import InviteOutcome
from review.control.services import REMIND_EVERY, RemindResult


def assign_problems(request: HttpRequest, result: AssignResult) -> None:
    if result.closed:
        messages.error(request, "The campaign is closed: no assignment is made until it is reopened.")
        return
    if result.members == 0:
        messages.error(request, "This campaign has no active reviewers: add or invite some below, then assign.")
        return
    for username, reason in sorted(result.refused.items()):
        messages.error(request, f"Nothing assigned to {username}: {reason}.")
    if result.shortfall:
        gaps = ", ".join(f"{item} ({n})" for item, n in sorted(result.shortfall.items()))
        messages.error(request, f"No eligible reviewer left for: {gaps}. Add reviewers or relax conflicts.")


def report_invites(request: HttpRequest, outcome: InviteOutcome) -> None:
    """Say what each line did. The links themselves never go into a message (messages ride in a
    cookie): without a mail server, `links_page` shows them once."""
    for issued in outcome.issued:
        text = f"Invited {issued.invitation.email} (expires {issued.invitation.expires_at:%Y-%m-%d %H:%M} UTC)"
        if outcome.mailed:
            messages.success(request, f"{text}; the link was mailed.")
        else:
            messages.warning(request, f"{text}. No mail server is configured: send the link below yourself.")
        for note in issued.notes:
            messages.info(request, f"{issued.invitation.email}: {note}")
    for refusal in outcome.refused:
        messages.error(request, f"Not invited: {refusal}")


def invites_done(request: HttpRequest, outcome: InviteOutcome, back: str) -> HttpResponse:
    """After inviting: back to `back`, or, when no mail server sent the links, a page that shows
    them this once (only their hashes are stored; the page is not cached and carries no token in
    its URL)."""
    report_invites(request, outcome)
    if outcome.mailed or not outcome.issued:
        return redirect(back)
    response = render(request, "review/invitations_sent.html", {"issued": outcome.issued, "back": back})
    add_never_cache_headers(response)
    return response


def report_reminders(request: HttpRequest, result: RemindResult) -> None:
    """Say what each reviewer got; without a mail server, that nothing was sent (the page that
    follows shows what would have been)."""
    if not result.mailed and (result.unsent or result.reinvited):
        messages.warning(
            request,
            "No mail server is configured (EMAIL_HOST): nothing was sent. The reminders and invitation links "
            "below are what would have been mailed; send them yourself.",
        )
    if result.sent:
        messages.success(request, f"Reminder mailed to {len(result.sent)} reviewer(s): {', '.join(result.sent)}.")
    if result.reinvited:
        emails = ", ".join(issued.invitation.email for issued in result.reinvited)
        if result.mailed:
            messages.success(
                request,
                f"Invitation mailed again to {len(result.reinvited)} invitee(s) who have not accepted it, instead of "
                f"a reminder (a new link; the old one no longer works): {emails}.",
            )
        else:
            messages.info(
                request,
                f"Not accepted yet, so an invitation instead of a reminder (a new link; the old one no longer "
                f"works), not sent: {emails}.",
            )
    if result.unsent:
        names = ", ".join(u.username for u in result.unsent)
        messages.info(request, f"Reminder not sent to {len(result.unsent)} reviewer(s): {names}.")
    if result.recent:
        hours = int(REMIND_EVERY.total_seconds() // 3600)
        messages.info(request, f"Not reminded again (reminded in the last {hours} h): {', '.join(result.recent)}.")
    if result.no_email:
        messages.warning(request, f"No email address, not reminded: {', '.join(result.no_email)}.")
    if result.revoked:
        messages.warning(
            request,
            f"Invitation revoked and never accepted, neither reminded nor invited again: {', '.join(result.revoked)}.",
        )
    for username, error in sorted(result.failed.items()):
        messages.error(request, f"Reminder to {username} failed: {error}")
    if result.nothing:
        messages.info(request, "Nobody has open work in this campaign: no reminder sent.")
