from django.core.management.base import BaseCommand, CommandError

from accounts.models import Invitation
from accounts.services import invitation_revoke, invitations_revoke_for


class Command(BaseCommand):
    help = "Revoke pending invitations: every one of an email, or one by its code. A revoked link does nothing."

    def add_arguments(self, parser) -> None:
        parser.add_argument("target", help="an email address, or an invitation code (UUID)")

    def handle(self, *args, target: str, **options) -> None:
        if "@" in target:
            count = invitations_revoke_for(email=target)
            self.stdout.write(f"{count} pending invitation(s) of {target} revoked.")
            return
        invitation = Invitation.objects.filter(code=target).first() if _is_uuid(target) else None
        if invitation is None:
            raise CommandError(f"no invitation with code {target!r} (give an email or an invitation code)")
        if not invitation_revoke(invitation=invitation):
            raise CommandError(f"invitation {target} is {invitation.state()}: nothing to revoke")
        self.stdout.write(f"Invitation {target} of {invitation.email} revoked.")


def _is_uuid(text: str) -> bool:
    import uuid

    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True
