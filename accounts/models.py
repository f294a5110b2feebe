from django.conf import settings
from django.db import models


class Profile(models.Model):
    """What a reviewer brings to assignment: expertise tags matched against items."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile")
    expertise = models.JSONField(default=list, blank=True)
    invited_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"profile of {self.user}"
