from django_rq.management.commands.rqscheduler import Command  # noqa: F401  (config/rq/__init__.py)
