"""Remove sandboxes whose run ended or whose worker died; safe to run repeatedly."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from sandbox.reaper import Reaper


class Command(BaseCommand):
    help = "Remove orphaned sandboxes (run ended, worker died, stopped, too old)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--loop", action="store_true", help="keep sweeping every --interval seconds")
        parser.add_argument("--interval", type=float, default=60.0)
        parser.add_argument("--max-age", type=float, default=24.0, help="hours after which any sandbox goes")
        parser.add_argument("--dry-run", action="store_true", help="only say what would be removed")
        parser.add_argument("--no-docker", action="store_true", help="skip the Docker engine")

    def handle(self, *args: Any, **options: Any) -> None:
        reaper = Reaper(max_age=options["max_age"] * 3600, dry_run=options["dry_run"], log=self.stdout.write)
        while True:
            docker = not options["no_docker"] and self.docker_wanted()
            removed = self.sweep(reaper, docker=docker, podman=self.podman_wanted())
            # At verbosity 0 (housekeeping) only what was removed is said.
            if removed or options["verbosity"] > 0:
                self.stdout.write(f"{len(removed)} sandbox(es) {'to remove' if options['dry_run'] else 'removed'}")
            if not options["loop"]:
                return
            time.sleep(options["interval"])

    def docker_wanted(self) -> bool:
        """Sweep the engine unless there is none and the platform does not use it (bwrap machines)."""
        from sandbox import conf
        from sandbox.docker import engine_available

        return conf.backend_name() == "docker" or engine_available()[0]

    def podman_wanted(self) -> bool:
        """Sweep podman's containers where the platform runs its sandboxes there."""
        from sandbox import conf

        return conf.backend_name() == "podman"

    def sweep(self, reaper: Reaper, *, docker: bool, podman: bool = False) -> list[tuple[str, str]]:
        try:
            return reaper.reap_once(docker=docker, podman=podman)
        except Exception as exc:  # an engine hiccup must not end a long-running sweeper
            self.stderr.write(f"sweep failed: {exc}")
            return []
