from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_email

from accounts.roles import REVIEWER
from accounts.services import InvitationRefused, invitation_create, mail_configured


class Command(BaseCommand):
    # The system checks import every URL conf and view (scipy, the LLM SDKs): seconds spent on a
    # command that touches two tables. `manage.py check` and the test suite still run them.
    requires_system_checks = []

    help = (
        "Invite a reviewer: print a one-time link (also sent by email) that works until revoked or expired "
        "(INVITATION_TTL_DAYS). An email that already has an account is refused unless --add-role confirms "
        "that its holder may take the reviewer role."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("email")
        parser.add_argument("--expertise", default="", help="comma-separated tags, e.g. nlp,rl,theory")
        parser.add_argument("--days", type=int, default=None, help="the link expires after this many days")
        parser.add_argument(
            "--add-role",
            action="store_true",
            help="the email has an account already: confirm that it may take the reviewer role (its holder "
            "accepts signed in; the link sets no password of an account that has one)",
        )

    def handle(self, *args, email: str, expertise: str, add_role: bool, days: int | None, **options) -> None:
        try:
            validate_email(email)
        except ValidationError:
            raise CommandError(f"{email!r} is not an email address") from None
        # Without a mail server the console backend would print the whole mail, link included,
        # before the line below prints it again: send only when it goes somewhere.
        send = mail_configured()
        try:
            issued = invitation_create(
                email=email,
                roles=[REVIEWER],
                expertise=expertise.split(","),
                add_roles=add_role,
                send=send,
                ttl_days=days,
            )
        except InvitationRefused as exc:
            raise CommandError(f"not invited: {exc}") from None
        invitation = issued.invitation
        verb = "Created reviewer" if issued.created_account else f"Invited the existing account {invitation.user}"
        for note in issued.notes:
            self.stdout.write(f"note: {note}")
        if not send:
            self.stdout.write("note: no mail server is configured (EMAIL_HOST): pass the link on yourself")
        self.stdout.write(
            f"{verb} {invitation.email} (invitation {invitation.code}, expires "
            f"{invitation.expires_at:%Y-%m-%d %H:%M} UTC). One-time link:\n{issued.link}"
        )
