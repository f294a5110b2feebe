from importlib import import_module

Command = import_module("django_rq.management.commands.rqworker-pool").Command  # config/rq/__init__.py
