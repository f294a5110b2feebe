from django_rq.management.commands.rqcron import Command  # noqa: F401  (config/rq/__init__.py)
