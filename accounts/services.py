"""Role set-up and invitations."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from accounts.models import Invitation, Profile
from accounts.roles import ADMIN, RESEARCHER, REVIEWER, ROLES, is_researcher

# Model permissions per role, by app label; admins get all of them and staff access.
ROLE_APPS: dict[str, tuple[str, ...]] = {
    ADMIN: ("accounts", "benchmark", "judge", "review", "auth", "django_rq"),
    RESEARCHER: ("benchmark",),
    REVIEWER: (),
}


def roles_ensure() -> dict[str, Group]:
    """Create the three groups and give them their permissions; safe to run again."""
    groups = {}
    for role, apps in ROLE_APPS.items():
        group, _ = Group.objects.get_or_create(name=role)
        if apps:
            group.permissions.set(Permission.objects.filter(content_type__app_label__in=apps))
        groups[role] = group
    return groups


def user_create(*, username: str, email: str = "", role: str, password: str | None = None):
    User = get_user_model()
    user = User.objects.create_user(username=username, email=email, password=password)
    roles_grant(user, [role])
    return user


def user_roles(user: Any) -> set[str]:
    return set(user.groups.filter(name__in=ROLES).values_list("name", flat=True))


def roles_grant(user: Any, roles: list[str]) -> None:
    groups = roles_ensure()
    user.groups.add(*(groups[role] for role in roles))
    if ADMIN in roles and not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])


# ---------------------------------------------------------------- invitations


class InvitationRefused(ValueError):
    """The invitation would do something the admin did not confirm, or cannot be done at all."""


@dataclass
class InvitationIssued:
    invitation: Invitation
    link: str
    created_account: bool
    notes: list[str] = field(default_factory=list)


def _tags(values: list[str]) -> list[str]:
    return sorted({tag.strip().lower() for tag in values if tag.strip()})


# Where config/urls.py mounts accounts.urls (a test holds the two together).
ACCOUNTS_MOUNT = "/accounts"


def invitation_link(token: str) -> str:
    # Reversed in accounts' own URL conf: reversing in the project's imports every view of every
    # app (scipy, the LLM SDKs), seconds that `invite_reviewer` would spend for one string.
    path = reverse("invitation_open", urlconf="accounts.urls", args=[token])
    return settings.SITE_URL.rstrip("/") + ACCOUNTS_MOUNT + path


@transaction.atomic
def invitation_create(
    *,
    email: str,
    roles: list[str],
    expertise: list[str] = (),
    created_by: Any = None,
    add_roles: bool = False,
    send: bool = True,
    ttl_days: int | None = None,
) -> InvitationIssued:
    """Invite `email` into an account with `roles`; return the invitation and its one-time link.

    An unknown email gets a new account (no usable password until the link is used) holding the
    roles. An existing account is never changed here: if the invitation would add a role, the
    admin must say so (`add_roles`), and the roles are added only when the account's holder
    accepts, signed in as that account, so the link alone can neither add a role nor set the
    password of an account that has one. A new invitation replaces the email's pending ones.
    The link works for `ttl_days` (default INVITATION_TTL_DAYS).
    """
    ttl_days = settings.INVITATION_TTL_DAYS if ttl_days is None else ttl_days
    if not 1 <= ttl_days <= 365:
        raise InvitationRefused(f"an invitation expires after 1 to 365 days, not {ttl_days}")
    unknown = set(roles) - set(ROLES)
    if unknown or not roles:
        raise InvitationRefused(f"unknown role(s): {', '.join(sorted(unknown)) or '(none given)'}")
    User = get_user_model()
    email = User.objects.normalize_email(email).strip()
    user = User.objects.filter(email__iexact=email).order_by("pk").first()
    created = user is None
    notes: list[str] = []
    if created:
        user = _invited_account(email=email, roles=roles, expertise=expertise)
    else:
        notes += _existing_account_notes(user, email=email, roles=roles, add_roles=add_roles)
        Profile.objects.update_or_create(user=user, defaults={"invited_at": timezone.now()})
    now = timezone.now()
    superseded = (
        Invitation.objects.pending(now).filter(email__iexact=email).update(revoked_at=now, revoked_by=created_by)
    )
    if superseded:
        notes.append(f"{superseded} earlier pending invitation(s) of {email} revoked: only the new link works")
    token = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        email=email,
        roles=sorted(set(roles)),
        expertise=_tags(list(expertise)),
        user=user,
        created_account=created,
        token_hash=Invitation.hash_token(token),
        created_by=created_by,
        expires_at=now + timedelta(days=ttl_days),
    )
    link = invitation_link(token)
    if send:
        _invitation_mail(invitation, link, new_password=not user.has_usable_password())
    return InvitationIssued(invitation=invitation, link=link, created_account=created, notes=notes)


def _invited_account(*, email: str, roles: list[str], expertise: list[str]) -> Any:
    """A new account for an unknown email, holding the roles, with no usable password until the link is used."""
    # password=None stores an unusable password in the INSERT itself: a second save would
    # fire the "access changed" broadcast (accounts.signals) for an account nobody uses yet.
    user = get_user_model().objects.create_user(username=email, email=email, password=None)
    roles_grant(user, roles)
    Profile.objects.update_or_create(
        user=user, defaults={"expertise": _tags(list(expertise)), "invited_at": timezone.now()}
    )
    return user


def _existing_account_notes(user: Any, *, email: str, roles: list[str], add_roles: bool) -> list[str]:
    """Refuse an invitation that would reactivate an account or add roles unconfirmed; otherwise what
    the admin should know (roles added only on acceptance, a researcher becoming a reviewer)."""
    if not user.is_active:
        raise InvitationRefused(
            f"{email} belongs to the deactivated account {user.get_username()!r}: an invitation does not "
            "reactivate an account; an admin must reactivate it first"
        )
    have = user_roles(user)
    adding = sorted(set(roles) - have)
    if adding and not add_roles:
        raise InvitationRefused(
            f"{email} already has the account {user.get_username()!r} (roles: {', '.join(sorted(have)) or 'none'}); "
            f"this invitation would add the role(s) {', '.join(adding)} to it. Invitations never change an "
            "existing account's roles unless you confirm it (--add-role); its holder then confirms too, signed in."
        )
    notes = []
    if REVIEWER in adding and is_researcher(user):
        notes.append(
            f"{user.get_username()} can see runs and judgments: they will be refused for every campaign "
            "whose systems they could identify"
        )
    if adding:
        notes.append(f"the role(s) {', '.join(adding)} are added when {user.get_username()} accepts, signed in")
    return notes


def mail_configured() -> bool:
    """False when mail only goes to the console (EMAIL_HOST unset): the admin must pass the link on."""
    return settings.EMAIL_BACKEND != "django.core.mail.backends.console.EmailBackend"


def invitation_resend(*, invitation: Invitation, by: Any = None, ttl_days: int | None = None) -> InvitationIssued:
    """A fresh link for the same email, roles and expertise; the old link stops working.

    Only the token's hash is stored, so the old link cannot be sent again: resending is a new
    invitation. Roles it adds to an existing account were confirmed when it was first made.
    """
    if invitation.used_at is not None:
        raise InvitationRefused(f"the invitation of {invitation.email} was used already: nothing to resend")
    return invitation_create(
        email=invitation.email,
        roles=list(invitation.roles),
        expertise=list(invitation.expertise),
        created_by=by,
        add_roles=True,
        send=mail_configured(),
        ttl_days=ttl_days,
    )


def _invitation_mail(invitation: Invitation, link: str, *, new_password: bool) -> None:
    roles = " and ".join(invitation.roles)
    until = invitation.expires_at.strftime("%Y-%m-%d %H:%M UTC")
    how = (
        "Set your password and sign in (the link works once)"
        if new_password
        else "Sign in with your existing account and confirm (the link works once)"
    )
    send_mail(
        f"Your Referee {roles} invitation",
        f"You have been invited to Referee as {roles}.\n\n{how}, until {until}:\n{link}\n",
        settings.DEFAULT_FROM_EMAIL,
        [invitation.email],
    )


def invitation_by_token(token: str) -> Invitation | None:
    return Invitation.objects.select_related("user").filter(token_hash=Invitation.hash_token(token)).first()


def invitation_revoke(*, invitation: Invitation, by: Any = None) -> bool:
    """Revoke a pending invitation; False if it was already used, revoked or expired."""
    now = timezone.now()
    return bool(Invitation.objects.pending(now).filter(pk=invitation.pk).update(revoked_at=now, revoked_by=by))


def invitations_revoke_for(*, email: str, by: Any = None) -> int:
    now = timezone.now()
    return Invitation.objects.pending(now).filter(email__iexact=email.strip()).update(revoked_at=now, revoked_by=by)


class InvitationUnusable(Exception):
    """The link is used, revoked or expired: it does nothing."""

    def __init__(self, invitation: Invitation) -> None:
        super().__init__(invitation.state())
        self.invitation = invitation


@transaction.atomic
def invitation_accept(*, invitation: Invitation, password: str | None = None) -> Any:
    """Use the invitation: set the password (accounts without one), add its roles, mark it used.

    The row is locked and its state read again inside the transaction: of two tabs submitting
    the same link, or a revocation landing between the page and the submit, one wins cleanly.
    """
    current = Invitation.objects.select_for_update().get(pk=invitation.pk)  # no join: PostgreSQL locks one table
    if current.state() != Invitation.State.PENDING:
        raise InvitationUnusable(current)
    user = current.user
    if password is not None:
        user.set_password(password)
        user.save(update_fields=["password"])
    roles_grant(user, current.roles)
    if current.expertise:
        Profile.objects.update_or_create(user=user, defaults={"expertise": current.expertise})
    current.used_at = timezone.now()
    current.save(update_fields=["used_at"])
    return user
