from django.core.management.base import BaseCommand

from judge.rubrics import rubric_load_defaults


class Command(BaseCommand):
    help = "Create version 1 of every stage's rubric (idea, proposal, experiment, writing, end to end, hallucination). Idempotent."

    def handle(self, *args, **options) -> None:
        rubric_load_defaults(stdout=self.stdout)
