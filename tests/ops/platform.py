"""`scripts/up.py` started for real (by a test, or bench/footprint.py for another checkout too): its own
var dir and ports, its log collected."""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from config.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]
READY = "Referee is running at"


def running(pid: int) -> bool:
    """Running, not merely a zombie waiting for whoever inherited it to reap it."""
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


class Platform:
    def __init__(self, var_dir: Path, *, root: Path = ROOT, **env: str) -> None:
        self.root = root
        self.var_dir = var_dir
        self.port = free_port()
        self.env = {**os.environ, "REFEREE_VAR_DIR": str(var_dir), "REFEREE_PORT": str(self.port)}
        self.env["REFEREE_REDIS_PORT"] = str(free_port())
        self.ws_port = free_port()
        self.env["REFEREE_WS_PORT"] = str(self.ws_port)
        # The test session's Redis, database, channel prefix and sandbox backend are not this platform's.
        for name in ("REDIS_URL", "DATABASE_URL", "CHANNEL_PREFIX", "DJANGO_SETTINGS_MODULE", "SANDBOX_BACKEND"):
            self.env.pop(name, None)
        # No released data to import: the platform is what is under test, and seeding it costs minutes.
        self.env.update({"MLGYM_DIR": "/nonexistent", "MLRBENCH_DIR": "/nonexistent", "PYTHONUNBUFFERED": "1"})
        # /healthz shows its parts to admins only: the test signs in as the platform's admin.
        self.admin_password = secrets.token_urlsafe(16)
        self.env["REFEREE_ADMIN_PASSWORD"] = self.admin_password
        self.env.update(env)
        self._opener: urllib.request.OpenerDirector | None = None
        self.lines: list[str] = []
        self.proc: subprocess.Popen[str] | None = None

    # -- life ----------------------------------------------------------------------------------
    def start(self, *, timeout: float = 300, until: str = READY) -> Platform:
        self.proc = subprocess.Popen(
            [sys.executable, str(self.root / "scripts" / "up.py")],
            cwd=self.root,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        threading.Thread(target=self._collect, daemon=True).start()
        self.wait_for(until, timeout=timeout)
        return self

    def _collect(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def log(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, text: str, *, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.log:
            if self.proc is not None and self.proc.poll() is not None and text not in self.log:
                raise AssertionError(f"up.py exited ({self.proc.returncode}) before {text!r}:\n{self.log[-5000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no {text!r} within {timeout:g} s:\n{self.log[-5000:]}")
            time.sleep(0.1)

    def stop(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return self.proc.returncode

    # -- looking at it ---------------------------------------------------------------------------
    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def admin(self, timeout: float = 10) -> urllib.request.OpenerDirector:
        """An HTTP client signed in as the platform's admin (through the login form, as a person would)."""
        if self._opener is None:
            jar = http.cookiejar.CookieJar()
            opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
            page = opener.open(self.url("/accounts/login/"), timeout=timeout).read().decode()
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
            form = {"username": "admin", "password": self.admin_password, "csrfmiddlewaretoken": token}
            request = urllib.request.Request(
                self.url("/accounts/login/"),
                data=urllib.parse.urlencode(form).encode(),
                headers={"Referer": self.url("/")},
            )
            opener.open(request, timeout=timeout).read()
            if not any(cookie.name == "sessionid" for cookie in jar):
                raise AssertionError("could not sign in as the platform's admin")
            self._opener = opener
        return self._opener

    def health(self, timeout: float = 10) -> tuple[int, dict[str, Any]]:
        """/healthz as the admin sees it (every part)."""
        try:
            with self.admin(timeout).open(self.url("/healthz"), timeout=timeout) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def state(self) -> dict[str, Any]:
        return json.loads((self.var_dir / "up" / "state.json").read_text())

    def child_pid(self, name: str) -> int:
        return int(self.state()["children"][name]["pid"])

    def wait_health(self, status: str, *, timeout: float = 60) -> dict[str, Any]:
        """Poll /healthz until its status is `status`; the report."""
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        report: dict[str, Any] = {}
        while time.monotonic() < deadline:
            try:
                _, report = self.health(timeout=5)
            except OSError as exc:  # the web process itself restarting
                seen.append(f"unreachable: {exc}")
                time.sleep(0.1)
                continue
            failing = sorted(name for name, part in report.items() if isinstance(part, dict) and not part["ok"])
            seen.append(f"{report['status']} {failing}")
            if report["status"] == status:
                return report
            time.sleep(0.1)
        raise AssertionError(
            f"/healthz never said {status!r} in {timeout:g} s; it said {seen[-5:]}; last report {report}\n{self.log[-3000:]}"
        )

    def manage(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """A management command run by hand in another shell: no REDIS_URL, the platform's var dir."""
        child_env = {k: v for k, v in self.env.items() if k != "REDIS_URL"}
        return subprocess.run(
            [sys.executable, str(self.root / "manage.py"), *args],
            cwd=self.root,
            env={**child_env, **env},
            capture_output=True,
            text=True,
            timeout=120,
        )
