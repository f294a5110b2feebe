"""Role set-up and reviewer invitations."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.contrib.auth.tokens import default_token_generator
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from accounts.models import Profile
from accounts.roles import ADMIN, RESEARCHER, REVIEWER

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
    if role == ADMIN:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    user.groups.add(roles_ensure()[role])
    return user


def invite_link(user) -> str:
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    token = default_token_generator.make_token(user)
    return settings.SITE_URL.rstrip("/") + reverse("accounts:invite_accept", args=[uid, token])


@transaction.atomic
def reviewer_invite(*, email: str, expertise: list[str]) -> tuple[object, str, bool]:
    """Create (or refresh) a reviewer account; return (user, one-time link, created)."""
    User = get_user_model()
    email = User.objects.normalize_email(email)
    user = User.objects.filter(email__iexact=email).first()
    created = user is None
    if created:
        username = email
        user = user_create(username=username, email=email, role=REVIEWER)
        user.set_unusable_password()
        user.save(update_fields=["password"])
    elif not user.groups.filter(name=REVIEWER).exists():
        user.groups.add(roles_ensure()[REVIEWER])
    profile, _ = Profile.objects.get_or_create(user=user)
    profile.expertise = sorted({tag.strip().lower() for tag in expertise if tag.strip()})
    profile.invited_at = timezone.now()
    profile.save()
    link = invite_link(user)
    send_mail(
        "Your Referee reviewer account",
        f"You have been invited to review on Referee.\n\nSet your password and sign in (the link works once):\n{link}\n",
        settings.DEFAULT_FROM_EMAIL,
        [email],
    )
    return user, link, created
