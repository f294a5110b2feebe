from django_rq.management.commands.rqsuspend import Command  # noqa: F401  (config/rq/__init__.py)
