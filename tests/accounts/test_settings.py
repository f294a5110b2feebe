import pytest
from django.core.exceptions import ImproperlyConfigured

from config import env


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("1", True),
        ("true", True),
        ("YES", True),
        ("on", True),
        ("0", False),
        ("false", False),
        ("no", False),
        ("", False),
    ],
)
def test_it_parses_booleans(raw, expected):
    assert env.env_bool("DEBUG", not expected, {"DEBUG": raw}) is expected


def test_it_uses_the_default_when_unset():
    assert env.env_bool("DEBUG", True, {}) is True
    assert env.env_int("N", 7, {}) == 7
    assert env.env_list("ALLOWED_HOSTS", ["a"], {}) == ["a"]


def test_it_rejects_a_bad_boolean_naming_the_variable():
    with pytest.raises(ImproperlyConfigured, match="DEBUG='maybe'"):
        env.env_bool("DEBUG", False, {"DEBUG": "maybe"})


def test_it_rejects_bad_integers_and_ranges():
    with pytest.raises(ImproperlyConfigured, match="RUN_WORKERS"):
        env.env_int("RUN_WORKERS", 2, {"RUN_WORKERS": "two"})
    with pytest.raises(ImproperlyConfigured, match="below the minimum"):
        env.env_int("RUN_WORKERS", 2, {"RUN_WORKERS": "0"}, minimum=1)


def test_it_rejects_urls_without_scheme_or_with_the_wrong_one():
    with pytest.raises(ImproperlyConfigured, match="REDIS_URL"):
        env.env_url("REDIS_URL", None, {"REDIS_URL": "localhost:6379"})
    with pytest.raises(ImproperlyConfigured, match="schemes"):
        env.env_url("DATABASE_URL", None, {"DATABASE_URL": "mysql://x/y"}, schemes=("postgres", "sqlite"))
    assert env.env_url("REDIS_URL", None, {"REDIS_URL": "redis://h:1/0"}) == "redis://h:1/0"


def test_it_rejects_unknown_choices_and_empty_list_items():
    with pytest.raises(ImproperlyConfigured, match="SANDBOX_BACKEND='vm'"):
        env.env_choice("SANDBOX_BACKEND", "docker", ("docker", "bwrap", "local"), {"SANDBOX_BACKEND": "vm"})
    with pytest.raises(ImproperlyConfigured, match="empty item"):
        env.env_list("ALLOWED_HOSTS", [], {"ALLOWED_HOSTS": "a,,b"})


def test_it_parses_sizes():
    assert env.env_size_mb("SANDBOX_MEMORY", 1, {"SANDBOX_MEMORY": "512m"}) == 512
    assert env.env_size_mb("SANDBOX_MEMORY", 1, {"SANDBOX_MEMORY": "2g"}) == 2048
    with pytest.raises(ImproperlyConfigured, match="SANDBOX_MEMORY"):
        env.env_size_mb("SANDBOX_MEMORY", 1, {"SANDBOX_MEMORY": "lots"})


def test_it_stops_start_up_when_debug_is_maybe(tmp_path):
    """The real settings module refuses to load with a bad value, naming the variable."""
    import os
    import subprocess
    import sys

    environ = dict(os.environ, DEBUG="maybe", REFEREE_VAR_DIR=str(tmp_path))
    result = subprocess.run([sys.executable, "manage.py", "check"], capture_output=True, text=True, env=environ)
    assert result.returncode != 0
    assert "DEBUG='maybe'" in result.stderr


def test_it_refuses_a_run_heartbeat_ttl_that_a_late_beat_would_outrun(tmp_path):
    import os
    import subprocess
    import sys

    environ = dict(os.environ, RUN_HEARTBEAT_EVERY="5", RUN_HEARTBEAT_TTL="10", REFEREE_VAR_DIR=str(tmp_path))
    result = subprocess.run([sys.executable, "manage.py", "check"], capture_output=True, text=True, env=environ)
    assert result.returncode != 0
    assert "RUN_HEARTBEAT_TTL must be at least 3 x RUN_HEARTBEAT_EVERY" in result.stderr


def test_it_generates_a_secret_key_once_under_var(tmp_path):
    import os
    import subprocess
    import sys

    environ = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    environ["REFEREE_VAR_DIR"] = str(tmp_path)
    code = "from django.conf import settings; print(settings.SECRET_KEY)"
    run = lambda: subprocess.run(  # noqa: E731
        [
            sys.executable,
            "-c",
            f"import django,os;os.environ.setdefault('DJANGO_SETTINGS_MODULE','config.settings');django.setup();{code}",
        ],
        capture_output=True,
        text=True,
        env=environ,
        check=True,
    ).stdout.strip()
    first, second = run(), run()
    assert first == second and len(first) >= 50
    assert (tmp_path / "secret_key").read_text().strip() == first
