from django_rq.management.commands.rqenqueue import Command  # noqa: F401  (config/rq/__init__.py)
