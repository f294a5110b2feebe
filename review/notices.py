"""The messages admin pages show after an assignment or an invitation: what was done, what was refused and why."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest

from review.services import AssignResult
from review.setup import InviteOutcome


def assign_problems(request: HttpRequest, result: AssignResult) -> None:
    if result.members == 0:
        messages.error(request, "This campaign has no active reviewers: add or invite some below, then assign.")
        return
    for username, reason in sorted(result.refused.items()):
        messages.error(request, f"Nothing assigned to {username}: {reason}.")
    if result.shortfall:
        gaps = ", ".join(f"{item} ({n})" for item, n in sorted(result.shortfall.items()))
        messages.error(request, f"No eligible reviewer left for: {gaps}. Add reviewers or relax conflicts.")


def report_invites(request: HttpRequest, outcome: InviteOutcome) -> None:
    """Say what each line did. Without a mail server the links are shown here, once: only their
    hashes are stored, so this is the one place the admin can copy them from."""
    for issued in outcome.issued:
        text = f"Invited {issued.invitation.email} (expires {issued.invitation.expires_at:%Y-%m-%d %H:%M} UTC)"
        if outcome.mailed:
            messages.success(request, f"{text}; the link was mailed.")
        else:
            messages.warning(request, f"{text}. No mail server is configured: send this link yourself: {issued.link}")
        for note in issued.notes:
            messages.info(request, f"{issued.invitation.email}: {note}")
    for refusal in outcome.refused:
        messages.error(request, f"Not invited: {refusal}")
