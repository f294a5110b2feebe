from django_rq.management.commands.rqworker import Command  # noqa: F401  (config/rq/__init__.py)
