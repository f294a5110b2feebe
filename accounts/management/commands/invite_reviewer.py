from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_email

from accounts.services import reviewer_invite


class Command(BaseCommand):
    help = "Create a reviewer account and print a one-time login link (also sent by email)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("email")
        parser.add_argument("--expertise", default="", help="comma-separated tags, e.g. nlp,rl,theory")

    def handle(self, *args, email: str, expertise: str, **options) -> None:
        try:
            validate_email(email)
        except ValidationError:
            raise CommandError(f"{email!r} is not an email address") from None
        user, link, created = reviewer_invite(email=email, expertise=expertise.split(","))
        verb = "Created" if created else "Re-invited"
        self.stdout.write(f"{verb} reviewer {user.email}. One-time login link:\n{link}")
