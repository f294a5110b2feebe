"""manage.py reclaim_assignments [--campaign NAME] [--loop SECONDS]

Reclaims open assignments untouched for longer than their campaign's reclaim_after_hours and
hands the freed slots to other reviewers. With --loop it keeps sweeping (a sweeper process).
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from review.assignment.services import campaign_assign, campaign_reclaim
from review.models import Campaign


class Command(BaseCommand):
    help = "Reclaim assignments left untouched past their campaign's limit and reassign them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", help="only this campaign (name)")
        parser.add_argument("--loop", type=float, default=0, help="sweep every N seconds until stopped")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["loop"] < 0:
            raise CommandError("--loop must be 0 or more seconds")
        while True:
            self.sweep(opts["campaign"])
            if not opts["loop"]:
                return
            time.sleep(opts["loop"])

    def campaigns(self, name: str | None) -> list[Campaign]:
        qs = Campaign.objects.filter(status=Campaign.Status.OPEN, reclaim_after_hours__gt=0)
        if name:
            qs = Campaign.objects.filter(name=name)
            if not qs.exists():
                raise CommandError(f"no campaign named {name!r}")
        return list(qs)

    def sweep(self, name: str | None) -> None:
        for campaign in self.campaigns(name):
            reclaimed = campaign_reclaim(campaign=campaign)
            result = campaign_assign(campaign=campaign) if campaign.status == Campaign.Status.OPEN else None
            made = result.created if result else 0
            self.stdout.write(f"{campaign.name}: {len(reclaimed)} reclaimed, {made} reassigned")
            if result and result.shortfall:
                self.stdout.write(f"  no eligible reviewer for: {', '.join(sorted(result.shortfall))}")
