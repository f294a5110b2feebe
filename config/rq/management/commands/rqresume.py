from django_rq.management.commands.rqresume import Command  # noqa: F401  (config/rq/__init__.py)
