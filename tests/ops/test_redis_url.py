"""Settings find the Redis that `make up` started (var/redis_url) when REDIS_URL is unset."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _settings_redis_url(var_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    child = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    child.update({"REFEREE_VAR_DIR": str(var_dir), "DJANGO_SETTINGS_MODULE": "config.settings", **env})
    code = "from django.conf import settings; print(settings.REDIS_URL)"
    return subprocess.run([sys.executable, "-c", f"import django; django.setup(); {code}"], cwd=ROOT, env=child,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_it_reads_the_url_make_up_wrote_and_lets_redis_url_win(tmp_path: Path) -> None:
    (tmp_path / "redis_url").write_text("redis://127.0.0.1:6391/0\n")
    assert _settings_redis_url(tmp_path).stdout.strip() == "redis://127.0.0.1:6391/0"
    given = _settings_redis_url(tmp_path, REDIS_URL="redis://10.0.0.5:6379/2")
    assert given.stdout.strip() == "redis://10.0.0.5:6379/2"


def test_it_falls_back_to_a_local_server_without_make_up(tmp_path: Path) -> None:
    assert _settings_redis_url(tmp_path).stdout.strip() == "redis://127.0.0.1:6379/0"


def test_it_names_the_file_when_its_content_is_not_a_redis_url(tmp_path: Path) -> None:
    (tmp_path / "redis_url").write_text("http://example.org\n")
    result = _settings_redis_url(tmp_path)
    assert result.returncode != 0
    assert (
        f"{tmp_path / 'redis_url'} (written by make up): REDIS_URL='http://example.org' must use one of"
        in result.stderr
    )
