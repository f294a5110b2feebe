from django_rq.management.commands.rqstats import Command  # noqa: F401  (config/rq/__init__.py)
