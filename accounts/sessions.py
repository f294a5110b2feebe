"""Django's database sessions (SESSION_ENGINE), each request's session read with SQL built once.

The same table, rows and behaviour as django.contrib.sessions.backends.db: only the read of the
request's row skips the ORM's compile (config.db.select_joined), 1.0 -> 0.3 ms of CPU on every
signed-in request (issue 16, bench/review_load.py). Writes, expiry and the async path are Django's.
"""

from __future__ import annotations

from django.contrib.sessions.backends import db
from django.db import connection
from django.utils import timezone

from config.db import select_joined

_LIVE = "{root}.session_key = %s AND {root}.expire_date > %s"


class SessionStore(db.SessionStore):
    def _get_session_from_db(self):  # type: ignore[no-untyped-def]
        if self.session_key:
            now = connection.ops.adapt_datetimefield_value(timezone.now())
            found = select_joined(self.model, _LIVE, [self.session_key, now])
            if found:
                return found[0]
        self._session_key = None  # as Django's: an unknown or expired key starts a new session
        return None
