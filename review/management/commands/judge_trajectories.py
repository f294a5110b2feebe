"""Queue the judge's judgments of a trajectory campaign's runs, under the campaign's rubric."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from judge.services import judgment_request
from review.models import Campaign


class Command(BaseCommand):
    help = (
        "Queue one judgment per judge model of every run in a trajectory campaign (skipping runs that "
        "already have a queued, running or succeeded one by that model), so the agreement page can compare."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--campaign", required=True, help="campaign name")
        parser.add_argument("--judge", action="append", required=True, help="provider:model (repeatable)")

    def handle(self, *args, **options) -> None:
        campaign = Campaign.objects.select_related("rubric").filter(name=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign named {options['campaign']!r}")
        if not campaign.is_trajectory:
            raise CommandError(f"{campaign} reviews {campaign.stage} items, not trajectories")
        queued = 0
        for item in campaign.items.select_related("run").order_by("id"):
            have = set(
                item.run.judgments.filter(rubric=campaign.rubric, experiment__isnull=True)
                .exclude(status__in=["failed", "truncated"])
                .values_list("judge_model", flat=True)
            )
            wanted = [m for m in options["judge"] if m.strip() not in have]
            if not wanted:
                continue
            try:
                queued += len(
                    judgment_request(
                        run=item.run, rubric=campaign.rubric, judge_models=wanted, with_supplementary=False
                    )
                )
            except ValidationError as exc:
                raise CommandError(f"item {item.code}: {' '.join(exc.messages)}") from exc
        self.stdout.write(f"{queued} judgment(s) queued for {campaign.items.count()} run(s) of {campaign}\n")
