from __future__ import annotations

import hashlib
import uuid
from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class Profile(models.Model):
    """What a reviewer brings to assignment: expertise tags matched against items."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile")
    expertise = models.JSONField(default=list, blank=True)
    invited_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"profile of {self.user}"


class InvitationQuerySet(models.QuerySet):
    def pending(self, now: datetime | None = None) -> InvitationQuerySet:
        """Links that still work: not used, not revoked, not expired."""
        return self.filter(used_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now or timezone.now())


class Invitation(models.Model):
    """A one-time link that lets one person into one account with the roles it names.

    Only the SHA-256 of the token is stored: the token itself exists in the link that was sent
    and nowhere else, so a database dump opens no account. An invitation never changes an
    existing account's roles by itself: for an account that exists, the admin had to confirm
    the added roles when inviting, and the holder confirms them, signed in, when accepting.
    """

    class State(models.TextChoices):
        PENDING = "pending", "pending"
        USED = "used", "used"
        REVOKED = "revoked", "revoked"
        EXPIRED = "expired", "expired"

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False, help_text="names it in admin pages")
    email = models.EmailField()
    roles = models.JSONField(default=list, help_text="role names the account gets on acceptance")
    expertise = models.JSONField(default=list, blank=True, help_text="tags for the profile (reviewer matching)")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="invitations",
        help_text="the account it opens: created with it, or the existing account of that email",
    )
    created_account = models.BooleanField(default=False, help_text="the account was made for this invitation")
    token_hash = models.CharField(max_length=64, unique=True, editable=False, help_text="sha256 of the link's token")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    objects = InvitationQuerySet.as_manager()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(used_at__isnull=True) | Q(revoked_at__isnull=True), name="invitation_used_xor_revoked"
            ),
        ]
        indexes = [models.Index(fields=["email", "used_at", "revoked_at"], name="invitation_by_email")]  # re-invites
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"invitation of {self.email} ({self.state()})"

    @staticmethod
    def hash_token(token: str) -> str:
        return hashlib.sha256(token.encode()).hexdigest()

    def state(self, now: datetime | None = None) -> str:
        if self.used_at is not None:
            return self.State.USED
        if self.revoked_at is not None:
            return self.State.REVOKED
        if self.expires_at <= (now or timezone.now()):
            return self.State.EXPIRED
        return self.State.PENDING

    @property
    def is_pending(self) -> bool:
        return self.state() == self.State.PENDING
