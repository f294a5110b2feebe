from django.apps import AppConfig


class RQDashboardConfig(AppConfig):
    name = "config.rq"
    label = "django_rq"  # django-rq's own label: its content type, permission and migrations
    verbose_name = "Django-RQ"
    default_auto_field = "django.db.models.AutoField"
