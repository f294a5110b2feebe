"""manage.py export_reviews --campaign NAME [--format csv|json] [--drafts] [--output FILE]"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from review.io import exports
from review.models import Campaign


class Command(BaseCommand):
    help = "Export a campaign's reviews (submitted only unless --drafts) as CSV or JSON."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", required=True, help="campaign name")
        parser.add_argument("--format", choices=("csv", "json"), default="csv")
        parser.add_argument("--drafts", action="store_true", help="include unsubmitted drafts")
        parser.add_argument("--output", help="write here instead of stdout")

    def handle(self, *args: Any, **opts: Any) -> None:
        campaign = Campaign.objects.select_related("rubric").filter(name=opts["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign named {opts['campaign']!r}")
        render = exports.reviews_csv if opts["format"] == "csv" else exports.reviews_json
        body = render(campaign, include_drafts=opts["drafts"])
        if opts["output"]:
            Path(opts["output"]).write_text(body, encoding="utf-8")
            self.stderr.write(f"wrote {opts['output']}")
        else:
            self.stdout.write(body, ending="")
