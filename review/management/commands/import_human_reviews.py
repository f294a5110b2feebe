"""manage.py import_human_reviews CSV --campaign NAME [--reviewers-per-item 2]

Maps MLR-Bench's human_eval/human_review.csv onto the imported papers as submitted reviews and
prints every duplicated, missing or unmatched review (also stored on the campaign).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from review.io.importers import ImportError_, import_human_reviews


class Command(BaseCommand):
    help = "Import MLR-Bench human reviews (CSV) into a campaign, reporting duplicated and missing reviews."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("csv", help="human_review.csv")
        parser.add_argument("--campaign", required=True, help="campaign name (created if missing)")
        parser.add_argument("--reviewers-per-item", type=int, default=2)

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["reviewers_per_item"] < 1:
            raise CommandError("--reviewers-per-item must be at least 1")
        try:
            import_human_reviews(
                opts["csv"],
                campaign_name=opts["campaign"],
                reviewers_per_item=opts["reviewers_per_item"],
                stdout=self.stdout,
            )
        except ImportError_ as exc:
            raise CommandError(str(exc)) from exc
