"""Benchmark: load time in a browser of the new-campaign form and the agreement summary page, each
beside its alternative, on the stack `make up` serves.

    python bench/browser_load.py [--loads 5] [--form-items 10000] [--agreement-items 30,1000]
                                 [--form-compare REV] [--only form|agreement]

Each part runs in a process of its own on a throw-away SQLite database (under a temporary
REFEREE_VAR_DIR) and a Redis server this script starts: the data is seeded as bench/campaign_form.py
(10,000 candidate items) and bench/agreement.py (campaigns of N items x 5 criteria x 3 reviews +
2 judges) seed it, then the platform is served as `make up` and the tests' `live_url` serve it
(gunicorn with config/gunicorn.py, one process, and daphne for websockets; DEBUG off, static
files through whitenoise) and Debian's chromium opens each page through Playwright
(`--headless --no-sandbox --disable-gpu --disable-background-networking`), logged in as an admin.

Each load is a fresh browser context (nothing cached in the browser: every script and stylesheet is
fetched) and reads the Navigation Timing entry: navigation start to DOMContentLoaded's end and to
the load event's end, and the bytes of the page's HTML. Reported: the median of --loads loads.

- Campaign form: `/review/campaigns/new`. With --form-compare REV the same page of another
  revision (its files extracted with `git archive`, the repository only read) is served and
  loaded in the same run, e.g. the form before it paged its items from the server.
- Agreement: the summary page `/agreement/<code>/`, cold (the analysis cache cleared before each
  load: the page computes the analysis) and with the analysis cached; beside it the full page that
  the HTML download still renders (`report.html`: every criterion's tables and charts inline, with
  plotly.js), opened in the browser as a page (the download's Content-Disposition header dropped
  by Playwright's routing; the request still goes to the server), cold and cached too. A last row
  per size loads the summary with plotly.min.js answered empty by Playwright: a check that the
  summary no longer waits for the 4.6 MB chart library (agreement.js fetches it with the first
  criterion opened; before b3b1d43 the summary loaded it up front).
Targets (issue 33): the campaign form <= 1 s, the agreement summary <= 1 s (load event).

The scores and items are synthetic and only time the code; they are never shown as results.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
PLOTLY = "**/vendor/plotly.min.js*"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
NAVIGATION = """() => {
  const n = performance.getEntriesByType('navigation')[0];
  return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd, html_bytes: n.encodedBodySize,
          ttfb: n.responseStart};
}"""


def _bench_module(name: str) -> Any:
    """A bench script of this checkout, loaded by path (bench/agreement.py's name is the app's)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", HERE / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- one part, in a process of its own -------------------------------------------------------


def _setup(root: Path, var: Path) -> None:
    sys.path.insert(0, str(root))
    os.chdir(root)
    os.environ["REFEREE_VAR_DIR"] = str(var)
    os.environ["DEBUG"] = "0"
    os.environ.pop("DATABASE_URL", None)  # the default: SQLite (WAL) under REFEREE_VAR_DIR
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    import django

    django.setup()
    from django.core.management import call_command, get_commands

    call_command("migrate", verbosity=0)
    if "vendor_static" in get_commands():  # plotly.js into static/vendor/, as `make up` does
        call_command("vendor_static", verbosity=0)


def _serve(root: Path) -> tuple[str, list[subprocess.Popen]]:
    """gunicorn (one process) and daphne on this part's database, as `make up` and `live_url` run them."""
    import http.client

    from config.redis_server import free_port

    port, ws_port = free_port(), free_port()
    env = {**os.environ, "WEBSOCKET_PORT": str(ws_port), "WEB_PROCESSES": "1"}
    bind = f"127.0.0.1:{port}"
    try:
        from config.servers import http_command, websocket_command

        commands = [http_command(bind=bind), websocket_command(port=ws_port)]
    except ImportError:  # an older revision: gunicorn and daphne as config.servers writes them
        commands = [
            [sys.executable, "-m", "gunicorn", "-c", "python:config.gunicorn", "--bind", bind],
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(ws_port), "config.asgi:application"],
        ]
    procs = [
        subprocess.Popen(c, cwd=root, env=env, start_new_session=True, stdout=subprocess.DEVNULL) for c in commands
    ]
    deadline = time.monotonic() + 120
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/healthz")
            conn.getresponse().read()
            conn.close()
            break
        except (OSError, http.client.HTTPException):
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                _stop(procs)
                raise SystemExit(f"the served stack did not start: {[p.args for p in procs]}") from None
            time.sleep(0.3)
    return f"http://127.0.0.1:{port}", procs


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()


def _session(user: Any) -> str:
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client.cookies[settings.SESSION_COOKIE_NAME].value


def _load(
    browser: Any, base: str, session: str, url: str, *, inline: bool = False, block: str = ""
) -> dict[str, float]:
    """One navigation in a fresh context; `inline` drops a download's Content-Disposition, `block`
    (a URL pattern) answers those requests with an empty script instead of fetching them."""
    from django.conf import settings

    context = browser.new_context()
    try:
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": base}])
        page = context.new_page()
        if inline:

            def as_page(route: Any) -> None:
                response = route.fetch()
                headers = {k: v for k, v in response.headers.items() if k.lower() != "content-disposition"}
                route.fulfill(response=response, headers=headers)

            page.route(f"{base}{url}", as_page)
        if block:
            page.route(block, lambda route: route.fulfill(status=200, content_type="text/javascript", body=""))
        response = page.goto(f"{base}{url}", wait_until="load", timeout=120_000)
        assert response is not None and response.status == 200, (url, response and response.status)
        page.wait_for_function("performance.getEntriesByType('navigation')[0].loadEventEnd > 0")
        return page.evaluate(NAVIGATION)
    finally:
        context.close()


def _loads(n: int, load: Any, before: Any = None) -> dict[str, float]:
    runs = []
    for _ in range(n):
        if before:
            before()
        runs.append(load())
    return {
        "dcl_ms": statistics.median(r["dcl"] for r in runs),
        "load_ms": statistics.median(r["load"] for r in runs),
        "ttfb_ms": statistics.median(r["ttfb"] for r in runs),
        "max_load_ms": max(r["load"] for r in runs),
        "html_bytes": runs[-1]["html_bytes"],
    }


def part(which: str, root: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="bench-browser-") as tmp:
        _setup(root, Path(tmp) / "var")
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # Playwright's sync API keeps a loop in this thread
        rows: list[dict[str, Any]] = []
        if which == "form":
            admin = _bench_module("campaign_form")._fill(args.form_items)
            from django.urls import reverse

            targets = [("campaign form", reverse("review:campaign_create"), None, False, "")]
        else:
            from accounts.services import user_create
            from agreement import cache as agreement_cache

            seed_campaign = _bench_module("agreement").seed_campaign
            admin = user_create(username="bench_admin", role="admin")
            targets = []
            for n in (int(x) for x in args.agreement_items.split(",")):
                campaign, _ = seed_campaign(n, 3 if n <= 30 else 10)
                url = f"/agreement/{campaign.code}/"
                for label, path, inline in (
                    ("summary", url, False),
                    ("full page (report.html)", f"{url}report.html", True),
                ):
                    targets.append(
                        (f"agreement {n} items, {label}, cold", path, agreement_cache.cache_clear, inline, "")
                    )
                    targets.append((f"agreement {n} items, {label}, cached", path, None, inline, ""))
                # The summary with plotly.js refused: equal to the plain summary now that plotly.js
                # comes only with the first criterion opened (before, the gap was the library's load).
                targets.append((f"agreement {n} items, summary, cached, no plotly.js", url, None, False, PLOTLY))
        session = _session(admin)
        base, procs = _serve(root)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    for label, path, before, inline, block in targets:
                        # warm: the worker's imports and, for the cached rows, the analysis
                        _load(browser, base, session, path, inline=inline, block=block)

                        def once(path: str = path, inline: bool = inline, block: str = block) -> dict[str, float]:
                            return _load(browser, base, session, path, inline=inline, block=block)

                        out = _loads(args.loads, once, before)
                        rows.append({"label": label, "url": path, **out})
                finally:
                    browser.close()
        finally:
            _stop(procs)
        return rows


# --- the driver --------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--loads", type=int, default=5, help="loads per page (median reported)")
    ap.add_argument("--form-items", type=int, default=10_000)
    ap.add_argument("--agreement-items", default="30,1000")
    ap.add_argument("--form-compare", default="", help="a git revision whose campaign form is loaded beside")
    ap.add_argument("--only", choices=("form", "agreement"), default=None)
    ap.add_argument("--part", choices=("form", "agreement"), help=argparse.SUPPRESS)
    ap.add_argument("--root", default=str(HERE), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.part:
        print(json.dumps(part(args.part, Path(args.root), args)))
        return

    sys.path.insert(0, str(HERE))
    from config.redis_server import free_port, start_redis

    with tempfile.TemporaryDirectory(prefix="bench-browser-load-") as tmp:
        redis_port = free_port()
        redis = start_redis(data_dir=Path(tmp) / "redis", port=redis_port, persist=False)
        try:
            runs: list[tuple[str, str, Path]] = []
            if args.only in (None, "form"):
                runs.append(("this", "form", HERE))
                if args.form_compare:
                    snap = Path(tmp) / "snapshot"
                    snap.mkdir()
                    archive = subprocess.run(
                        ["git", "-C", str(HERE), "archive", args.form_compare], check=True, capture_output=True
                    )
                    subprocess.run(["tar", "-x", "-C", str(snap)], input=archive.stdout, check=True)
                    runs.append((args.form_compare[:12], "form", snap))
            if args.only in (None, "agreement"):
                runs.append(("this", "agreement", HERE))
            print(f"browser load time (chromium headless, fresh context per load): median of {args.loads} loads; "
                  "navigation start -> DOMContentLoaded end / load event end")  # fmt: skip
            for db, (label, which, root) in enumerate(runs, start=1):
                env = {
                    **os.environ,
                    "REDIS_URL": f"redis://127.0.0.1:{redis_port}/{db}",
                    "CHANNEL_PREFIX": f"bench{db}",
                }
                out = subprocess.run(
                    [sys.executable, __file__, "--part", which, "--root", str(root), "--loads", str(args.loads),
                     "--form-items", str(args.form_items), "--agreement-items", args.agreement_items],
                    capture_output=True, text=True, env=env,
                )  # fmt: skip
                if out.returncode:
                    raise SystemExit(f"{label} {which} failed:\n{out.stderr[-4000:]}")
                for r in json.loads(out.stdout.strip().splitlines()[-1]):
                    print(f"{label:<12} {r['label']:<56} DCL {r['dcl_ms']:7.0f} ms  load {r['load_ms']:7.0f} ms "
                          f"(max {r['max_load_ms']:6.0f})  first byte {r['ttfb_ms']:6.0f} ms  "
                          f"HTML {r['html_bytes'] / 1024:7.1f} KB")  # fmt: skip
            print("targets (issue 33): campaign form <= 1 s, agreement summary <= 1 s (load event)")
        finally:
            redis.terminate()
            redis.wait(timeout=10)


if __name__ == "__main__":
    main()
