"""A user's access can shrink outside any view (the Django admin, a shell, a command): a role
removed, the account deactivated or deleted, its password changed. (A logout is announced by
accounts.views.LogoutView, after the session is gone: user_logged_out fires before that.) These receivers tell that user's open websockets
to check their permission again (accounts.progress.user_access_changed)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models.signals import m2m_changed, post_delete, post_save


def _groups_changed(sender: Any, instance: Any, action: str, reverse: bool, pk_set: set | None, **kwargs: Any) -> None:
    from accounts.progress import user_access_changed

    if action == "pre_clear" and reverse:
        # group.user_set.clear(): the members are only known before the clear.
        instance._referee_cleared_users = list(instance.user_set.values_list("pk", flat=True))
        return
    if action not in ("post_remove", "post_clear"):
        return
    if not reverse:
        user_access_changed(instance.pk)
    elif action == "post_remove":
        user_access_changed(*(pk_set or ()))
    else:
        user_access_changed(*getattr(instance, "_referee_cleared_users", ()))


def _user_saved(sender: Any, instance: Any, created: bool, update_fields: Any, **kwargs: Any) -> None:
    from accounts.progress import user_access_changed

    if created or (update_fields is not None and set(update_fields) <= {"last_login"}):
        return  # a login takes nothing away (a password change does: it ends the other sessions)
    user_access_changed(instance.pk)


def _user_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    from accounts.progress import user_access_changed

    user_access_changed(instance.pk)


def connect() -> None:
    User = get_user_model()
    m2m_changed.connect(_groups_changed, sender=User.groups.through, dispatch_uid="accounts.groups_changed")
    post_save.connect(_user_saved, sender=User, dispatch_uid="accounts.user_saved")
    post_delete.connect(_user_deleted, sender=User, dispatch_uid="accounts.user_deleted")
