"""A second Docker engine for the tests of `make up`'s engine start: its own socket, data root, exec
root and pid file, a bridge of its own and no iptables rules, so it never touches the machine's own
engine (which keeps running: it serves every other test and helper on this machine).

Not `--bridge none`: a dockerd started with it deletes the interface named docker0 on start (moby's
removeDefaultBridgeInterface), the machine engine's bridge, and every later container start fails
with "could not find bridge docker0" (it failed CI's test_docker that way)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

import pytest


def needs_dockerd() -> None:
    if os.geteuid() != 0:
        pytest.skip("starting dockerd needs root")
    if not shutil.which("dockerd") or not shutil.which("docker"):
        pytest.skip("dockerd / docker are not installed")


class SecondEngine:
    def __init__(self) -> None:
        # Short paths: a unix socket path is at most 107 bytes, and containerd's lives under exec-root.
        self.dir = Path(tempfile.mkdtemp(prefix="rd-", dir="/tmp"))
        self.socket = self.dir / "docker.sock"
        self.host = f"unix://{self.socket}"
        self.data_root = self.dir / "data"
        # Its own bridge, with an address of its own so that dockerd takes none of the machine's ranges.
        self.bridge = f"rdbr{os.getpid() % 100000}"
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)
        for command in (
            ["ip", "link", "add", self.bridge, "type", "bridge"],
            ["ip", "addr", "add", f"10.213.{os.getpid() % 250}.1/24", "dev", self.bridge],
        ):
            subprocess.run(command, check=True, capture_output=True)

    def args(self, *, data_root: Path | None = None) -> list[str]:
        return [
            "--host",
            self.host,
            "--data-root",
            str(data_root or self.data_root),
            "--exec-root",
            str(self.dir / "exec"),
            "--pidfile",
            str(self.dir / "docker.pid"),
            "--bridge",
            self.bridge,
            "--iptables=false",
            "--ip6tables=false",
        ]

    def cli(self, *args: str, **kwargs) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["docker", "-H", self.host, *args], capture_output=True, text=True, timeout=60, **kwargs)

    def answers(self) -> bool:
        return self.cli("version", "--format", "{{.Server.Version}}").returncode == 0

    def wrapper(self, bin_dir: Path, *, data_root: Path | None = None) -> Path:
        """A `dockerd` on PATH that runs the real one in this layout (as `make up` runs plain `dockerd`)."""
        bin_dir.mkdir(parents=True, exist_ok=True)
        script = bin_dir / "dockerd"
        flags = " ".join(self.args(data_root=data_root))
        real = shutil.which("dockerd")
        script.write_text(f'#!/bin/sh\nPATH=/usr/sbin:/usr/bin:/sbin:/bin\nexec {real} {flags} "$@"\n')
        script.chmod(0o755)
        return script

    def with_image(self, tag: str) -> None:
        """Start this engine once, give it a tiny image under `tag`, and stop it again (its data root keeps it)."""
        proc = subprocess.Popen(
            ["dockerd", *self.args()], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            deadline = time.monotonic() + 60
            while not self.answers():
                assert proc.poll() is None and time.monotonic() < deadline, "the second dockerd did not start"
                time.sleep(0.5)
            tar = io.BytesIO()
            with tarfile.open(fileobj=tar, mode="w") as archive:
                info = tarfile.TarInfo("marker")
                info.size = 2
                archive.addfile(info, io.BytesIO(b"ok"))
            result = subprocess.run(
                ["docker", "-H", self.host, "import", "-", tag], input=tar.getvalue(), capture_output=True, timeout=60
            )
            assert result.returncode == 0, result.stderr
        finally:
            proc.terminate()
            proc.wait(timeout=60)

    def remove(self) -> None:
        subprocess.run(["umount", "-R", str(self.dir)], capture_output=True)  # overlay mounts, if any are left
        shutil.rmtree(self.dir, ignore_errors=True)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)
