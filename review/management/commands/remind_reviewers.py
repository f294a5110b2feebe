"""manage.py remind_reviewers [--campaign NAME]

Mails every reviewer with open work in each open campaign (or the one named) their count of open
items, the due date and a link to their queue, unless they were reminded within the last 12 hours
(review.control.services.REMIND_EVERY, shared with the campaign page's button). Invitees who have not
accepted their invitation get it again instead. Meant for cron, e.g. daily. Without a mail server
it sends nothing and says so (exit status 1): the campaign page's button shows what would be sent.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.services import mail_configured
from review.control.services import ControlRefused, reminders_send
from review.models import Campaign


class Command(BaseCommand):
    help = "Remind reviewers of their open work (at most once in 12 hours each, per campaign)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", help="only this campaign (name); default every open campaign")

    def handle(self, *args: Any, **opts: Any) -> None:
        if not mail_configured():
            # Unattended: new invitation links printed to a cron log would only revoke the old ones.
            raise CommandError(
                "no mail server is configured (EMAIL_HOST): nothing was sent; the campaign page's "
                "'Remind reviewers' button shows what would be sent, for you to pass on"
            )
        if opts["campaign"]:
            campaigns = list(Campaign.objects.filter(name=opts["campaign"]))
            if not campaigns:
                raise CommandError(f"no campaign named {opts['campaign']!r}")
        else:
            campaigns = list(Campaign.objects.filter(status=Campaign.Status.OPEN).order_by("name"))
        failed = 0
        for campaign in campaigns:
            try:
                result = reminders_send(campaign=campaign)
            except ControlRefused as exc:
                raise CommandError(f"{campaign.name}: {exc}") from exc
            self.stdout.write(
                f"{campaign.name}: {len(result.sent)} reminded, {len(result.reinvited)} invited again (not "
                f"accepted), {len(result.recent)} reminded recently, {len(result.no_email)} without email, "
                f"{len(result.revoked)} with a revoked invitation, {len(result.failed)} failed"
            )
            for username, error in sorted(result.failed.items()):
                self.stderr.write(f"  {username}: {error}")
            failed += len(result.failed)
        if failed:
            raise CommandError(f"{failed} reminder(s) could not be sent")
