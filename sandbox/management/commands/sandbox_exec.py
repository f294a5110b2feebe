"""Run one command in a fresh sandbox, print its output, exit with its exit code."""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sandbox import conf
from sandbox.base import SandboxError, SandboxSpec, open_session


class Command(BaseCommand):
    help = "manage.py sandbox_exec [--backend B] [--image I] [--network] [--memory 512m] [--timeout S] -- CMD..."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--backend", choices=conf.BACKENDS, help="default: SANDBOX_BACKEND")
        parser.add_argument("--image", help="docker image (default: SANDBOX_IMAGE)")
        parser.add_argument("--network", action="store_true", help="allow network access")
        parser.add_argument("--memory", default=None, help="memory limit, e.g. 512m or 2g")
        parser.add_argument("--timeout", type=float, default=60.0, help="seconds before the command is killed")
        parser.add_argument("cmd", nargs=argparse.REMAINDER, help="the command (after --)")

    def handle(self, *args: Any, **options: Any) -> None:
        words = [word for word in options["cmd"] if word != "--"] if options["cmd"][:1] == ["--"] else options["cmd"]
        if not words:
            raise CommandError("no command given: manage.py sandbox_exec -- CMD...")
        spec = SandboxSpec(image=options["image"], network=options["network"])
        if options["memory"]:
            try:
                spec.memory_mb = conf.parse_memory(options["memory"])
            except ValueError as exc:
                raise CommandError(f"--memory: {exc}") from exc
        command = words[0] if len(words) == 1 else shlex.join(words)
        try:
            with open_session(spec, backend=options["backend"]) as session:
                result = session.run(command, timeout=options["timeout"])
        except SandboxError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(result.output, ending="")
        if result.timed_out:
            self.stderr.write(f"[timed out after {options['timeout']:g}s]")
        if result.oom:
            self.stderr.write("[out of memory]")
        if result.exit_code:
            raise SystemExit(result.exit_code)
