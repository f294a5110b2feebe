"""Queue the judge's judgments of a trajectory campaign's runs, under the campaign's rubric."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from review.models import Campaign
from review.trajectory.judging import campaign_judge_trajectories


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
        try:
            result = campaign_judge_trajectories(campaign=campaign, judge_models=options["judge"])
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(
            f"{len(result.queued)} judgment(s) queued for {result.runs} run(s) of {campaign} "
            f"({result.judged} already judged, {result.pending} still queued or running)\n"
        )
        if result.refused:
            raise CommandError("; ".join(f"item {code} not queued: {why}" for code, why in result.refused))
