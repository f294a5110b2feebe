"""Build (or reuse) the sandbox image: `docker build` where a registry answers, else debootstrap + docker import."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from sandbox.base import SandboxError
from sandbox.image import DEBOOTSTRAP, DOCKERFILE, ImageBuildError, build_image, podman_image_ensure
from sandbox.recipe import default_tag


class Command(BaseCommand):
    help = "Build the sandbox image referee-sandbox:<hash of inputs>, reused when it exists."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="rebuild even if the tag exists")
        parser.add_argument("--print-tag", action="store_true", help="only print the tag it would build")
        parser.add_argument(
            "--method",
            choices=(DOCKERFILE, DEBOOTSTRAP),
            help="how to build (default: the Dockerfile where a registry answers, else debootstrap as root)",
        )
        parser.add_argument(
            "--engine",
            choices=("docker", "podman"),
            default="docker",
            help="podman: put the image into podman's store (from this node's Docker engine, else its own build)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["print_tag"]:
            self.stdout.write(default_tag())
            return
        if options["engine"] == "podman":
            from sandbox import podman

            problem = podman.probe()
            if problem:
                raise CommandError(f"podman cannot run sandboxes here: {problem}")
            try:
                tag = podman_image_ensure(default_tag(), log=lambda line: self.stdout.write(line))
            except (ImageBuildError, SandboxError) as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(self.style.SUCCESS(tag))
            return
        try:
            tag = build_image(
                force=options["force"], method=options["method"], log=lambda line: self.stdout.write(line)
            )
        except (ImageBuildError, SandboxError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(tag))
