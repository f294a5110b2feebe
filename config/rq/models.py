from django.db import models


class Dashboard(models.Model):
    """django-rq's admin-only model (no table), declared as django-rq's migrations leave it."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = (("admin", "Access admin page"),)
        verbose_name = "Django-RQ"
        verbose_name_plural = "Django-RQ"

    def __str__(self):
        return "Django-RQ"
