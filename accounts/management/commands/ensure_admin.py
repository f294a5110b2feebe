import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from accounts.roles import ADMIN
from accounts.services import roles_ensure, user_create


class Command(BaseCommand):
    help = "Create the admin account once (password from REFEREE_ADMIN_PASSWORD, else generated and printed once)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--username", default=os.environ.get("REFEREE_ADMIN_USER", "admin"))

    def handle(self, *args, username: str, **options) -> None:
        roles_ensure()
        User = get_user_model()
        if User.objects.filter(username=username).exists():
            self.stdout.write(f"Admin account '{username}' exists (password unchanged).")
            return
        password = os.environ.get("REFEREE_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        user = user_create(username=username, role=ADMIN, password=password)
        user.is_superuser = True
        user.save(update_fields=["is_superuser"])
        if os.environ.get("REFEREE_ADMIN_PASSWORD"):
            self.stdout.write(f"Created admin account '{username}' with the password from REFEREE_ADMIN_PASSWORD.")
        else:
            self.stdout.write(
                f"Created admin account '{username}' with password: {password}\n"
                "  (shown once; change it at /accounts/password/)"
            )
