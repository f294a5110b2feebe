"""The messages the control room shows after reminders: what each reviewer got, what was refused and why."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest

from review.control.services import REMIND_EVERY, RemindResult


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
