from django_rq.management.commands.rqworker import Command as DjangoRQWorkerCommand


class Command(DjangoRQWorkerCommand):
    """django-rq's `rqworker` (config/rq/__init__.py), without the system checks at start.

    The checks import the whole URL configuration and the admin (a third of a worker's start,
    issue 20) to validate what the web processes serve, not what a worker runs; `make up` and
    deploy/ run them with `migrate` before any worker starts, and `manage.py check` runs them by hand.
    """

    requires_system_checks = []
