from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_email

from accounts.roles import REVIEWER
from accounts.services import InvitationRefused, invitation_create


class Command(BaseCommand):
    help = (
        "Invite a reviewer: print a one-time link (also sent by email) that works until revoked or expired "
        "(INVITATION_TTL_DAYS). An email that already has an account is refused unless --add-role confirms "
        "that its holder may take the reviewer role."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("email")
        parser.add_argument("--expertise", default="", help="comma-separated tags, e.g. nlp,rl,theory")
        parser.add_argument(
            "--add-role",
            action="store_true",
            help="the email has an account already: confirm that it may take the reviewer role (its holder "
            "accepts signed in; the link sets no password of an account that has one)",
        )

    def handle(self, *args, email: str, expertise: str, add_role: bool, **options) -> None:
        try:
            validate_email(email)
        except ValidationError:
            raise CommandError(f"{email!r} is not an email address") from None
        try:
            issued = invitation_create(
                email=email, roles=[REVIEWER], expertise=expertise.split(","), add_roles=add_role
            )
        except InvitationRefused as exc:
            raise CommandError(f"not invited: {exc}") from None
        invitation = issued.invitation
        verb = "Created reviewer" if issued.created_account else f"Invited the existing account {invitation.user}"
        for note in issued.notes:
            self.stdout.write(f"note: {note}")
        self.stdout.write(
            f"{verb} {invitation.email} (invitation {invitation.code}, expires "
            f"{invitation.expires_at:%Y-%m-%d %H:%M} UTC). One-time link:\n{issued.link}"
        )
