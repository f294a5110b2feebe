"""The messages admin pages show after an assignment or an invitation: what was done, what was refused
and why."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers

from review.assignment.services import AssignResult
from review.campaigns.setup import InviteOutcome


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
