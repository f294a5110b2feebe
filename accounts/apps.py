from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _ensure_roles(sender, **kwargs) -> None:
    from accounts.services import roles_ensure

    roles_ensure()


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts and roles"

    def ready(self) -> None:
        # Groups exist as soon as the schema does, also in the test database.
        post_migrate.connect(_ensure_roles, sender=self, dispatch_uid="accounts.ensure_roles")
        from accounts import signals

        signals.connect()
