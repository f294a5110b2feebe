"""What the test session proves it ran: tests counted by kind, and in CI a skip of a real part is a failure.

Kinds: `docker` (the real engine), `podman` (Podman without a daemon), `bwrap` (bubblewrap namespaces),
`browser` (Debian's chromium), `slurm` (a single-node Slurm cluster from Debian's slurm-wlm and munge,
tests/slurm_plugin.py),
`shared_data` (the released MLGym / MLR-Bench files under ../shared), and `postgres` (a database
test while the database is PostgreSQL, or a test marked `postgres`: one that can only fail where
writers really run at once, such as a race that SQLite's one-writer lock serializes away; it is
skipped with that reason on SQLite, and in CI, whose database is PostgreSQL, the skip is a failure). A test is of a kind by its marker; the sandbox fixtures
apply `docker`/`podman`/`bwrap` to the backend they run on, `shared_data(path, ...)` names the files a test
reads (the test is skipped, with the path, where they are missing).

With CI=true, a skipped test of the kinds that stand for a real part fails the run with its reason
printed: an import error in the Docker backend, a missing ../shared or a broken chromium must not
leave CI green. The one exception is `registry`: machines that reach no container registry are a
normal case (CI here is one), so such a test may skip, saying why, and is counted apart.
Loaded with `-p tests.ci_plugin` (pytest.ini).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

KINDS = ("docker", "podman", "bwrap", "browser", "shared_data", "slurm", "registry", "postgres")
# The kinds whose skip hides a part that CI exists to exercise.
MUST_RUN_IN_CI = ("docker", "podman", "bwrap", "browser", "shared_data", "slurm")

_executed: Counter[str] = Counter()
_total = 0


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes", "on"}


def _on_postgres() -> bool:
    try:
        from django.conf import settings

        return "postgresql" in settings.DATABASES["default"]["ENGINE"]
    except Exception:  # Django not configured (the plugin's own tests run without it)
        return False


def uses_database(item: pytest.Item) -> bool:
    return bool(item.get_closest_marker("django_db")) or "_django_db_helper" in getattr(item, "fixturenames", ())


def item_kinds(item: pytest.Item) -> list[str]:
    kinds = [kind for kind in KINDS[:-1] if item.get_closest_marker(kind)]
    if item.get_closest_marker("postgres") or (uses_database(item) and _on_postgres()):
        kinds.append("postgres")
    return kinds


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("postgres") and not _on_postgres():
        pytest.skip(
            "needs PostgreSQL: on SQLite one writer at a time serializes the race away, so this test "
            "cannot fail here; set DATABASE_URL=postgres://... (CI does)"
        )
    for marker in item.iter_markers("shared_data"):
        missing = [str(path) for path in marker.args if not Path(path).exists()]
        if missing:
            pytest.skip(
                f"released data not found at {', '.join(missing)}: set MLGYM_DIR / MLRBENCH_DIR, or work in a "
                "checkout under /work so that ../shared exists"
            )


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr: Any = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    global _total
    report = yield
    kinds = item_kinds(item)
    if report.when == "call" and report.outcome in ("passed", "failed"):
        _total += 1  # a test that ran to its end, whatever its result; a skip did not run its part
        _executed.update(kinds)
    if report.skipped and not hasattr(report, "wasxfail") and in_ci():
        hidden = [] if "registry" in kinds else [kind for kind in kinds if kind in MUST_RUN_IN_CI]
        if item.get_closest_marker("postgres"):
            hidden.append("postgres")
        if hidden:
            report.outcome = "failed"
            report.longrepr = f"CI=true: a skipped {'/'.join(hidden)} test is a failure. It was skipped because: {_skip_reason(report)}"
    return report


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    figures = ", ".join(f"{kind.replace('_', '-')} {_executed[kind]}" for kind in KINDS)
    terminalreporter.section("tests executed by kind")
    terminalreporter.write_line(f"{figures} (of {_total} tests executed){' [CI=true]' if in_ci() else ''}")
