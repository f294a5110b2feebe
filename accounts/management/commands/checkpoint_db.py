"""`manage.py checkpoint_db`: copy SQLite's write-ahead log into the database file, off the write path.

In WAL mode SQLite checkpoints inside the COMMIT that takes the log past `wal_autocheckpoint`
pages, and that commit waits for the database file's fsync: 20-80 ms on this project's VMs, against
1-2 ms for a step's commit (bench/stream_latency.py's rare slow steps, issue 20). The platform's
connections set a high `wal_autocheckpoint` (SQLITE_WAL_AUTOCHECKPOINT, config.settings), a
backstop for when nothing else checkpoints, and housekeeping runs this every few seconds: a PASSIVE
checkpoint, which never blocks a writer or a reader, so the log never reaches the backstop.
Nothing to do on PostgreSQL.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.db import connection


class Command(BaseCommand):
    help = "SQLite: a PASSIVE checkpoint of the write-ahead log (no-op on other databases)."

    def handle(self, *args: Any, **options: Any) -> None:
        if connection.vendor != "sqlite" or connection.in_atomic_block:  # a checkpoint runs outside transactions
            return
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")
            busy, logged, done = cursor.fetchone()
        # (0, -1, -1): not in WAL mode. A frame still read by an open transaction waits for the next pass.
        if options["verbosity"] >= 1 and logged >= 0:
            self.stdout.write(f"checkpointed {done} of {logged} frames" + (" (busy)" if busy else ""))
