"""django-rq's queue dashboard and commands, without importing django-rq at start (issue 20).

Installing the app "django_rq" imports the package `django_rq`, whose `__init__` imports its queues,
rq and redis (redis 8 loads its whole asyncio client): about 0.2 s of every command's start,
`manage.py help` included, most of which never touch a queue. This app stands in for it under the
same label, so the dashboard's content type and "Access admin page" permission stay those of
django-rq, and it loads django-rq's modules only where they are used:

- the dashboard: `admin.DashboardAdmin` imports django-rq's views when the admin builds its URLs;
- the commands (`rqworker`, `rqstats`, ...): each module here re-exports django-rq's, which Django
  imports only when that command runs;
- templates, template tags and the dashboard's CSS: found by path (settings), not by importing;
- migrations: django-rq's own (settings.MIGRATION_MODULES), read only by `migrate` and its kin.

`tests/ops/test_rq_app.py` checks that this app offers every command django-rq ships.
"""

from importlib.util import find_spec
from pathlib import Path


def django_rq_dir() -> Path:
    """django-rq's package folder, found without running its `__init__`."""
    spec = find_spec("django_rq")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("django-rq is not installed (requirements.txt)")
    return Path(next(iter(spec.submodule_search_locations)))
