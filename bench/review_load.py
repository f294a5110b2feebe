"""Review page under load: 20 concurrent reviewers open items and autosave drafts.

    python bench/review_load.py [--reviewers 20] [--saves 8] [--think 0.3] [--rounds 2]

A throw-away SQLite database (WAL, the default set-up) is migrated and seeded with the released
MLR-Bench papers (their markdown and figures) when ../shared/mlrbench is there, else with
synthetic papers of the same size. The WSGI app runs under a threaded server on loopback in a
separate process; a wrapper there times each request from the call to the last body byte
(server time, not client latency). Clients are threads of this process with their own session.

Reported, in one run: p50/p95/p99 server time of the item page and of the draft save, then the
obvious alternatives measured the same way: the item page rendering the paper on every request
(no render cache), and saving a draft the no-JavaScript way (a full form POST). Target: p95 <= 50 ms.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DIMENSIONS = ("clarity", "novelty", "soundness", "significance", "overall")


# ---------------------------------------------------------------- server side (subprocess)


def _django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def seed(n_reviewers: int) -> dict:
    """Rubric, papers, reviewers with sessions, a campaign with 2 reviewers per item."""
    _django()
    from django.contrib.sessions.backends.db import SessionStore

    from accounts.services import user_create
    from benchmark.models import Artifact, ResearchRun, Task
    from benchmark.research.files import file_store
    from judge.models import Rubric
    from review.services import campaign_assign, campaign_create

    dims = [
        {"key": k, "name": k.title(), "questions": [f"How is the {k}?"], "min": 1, "max": 10, "kind": "score",
         "anchors": {"9-10": "excellent", "7-8": "good", "5-6": "fair", "3-4": "weak", "1-2": "poor"}}
        for k in DIMENSIONS
    ]  # fmt: skip
    rubric = Rubric.objects.create(
        stage="end2end", version=1, name="End-to-end", instructions="Review.", dimensions=dims
    )
    papers = []
    candidates = [
        os.environ.get("MLRBENCH_DIR", ""),
        ROOT.parent / "shared" / "mlrbench",
        ROOT.parents[1] / "shared" / "mlrbench",
    ]
    shared = next((Path(c) for c in candidates if c and Path(c).is_dir()), Path("/nonexistent"))
    sources = sorted(shared.glob("agent_results/end2end_*/*/results/paper.md")) if shared.is_dir() else []
    for i in range(30):
        if sources:
            paper_md = sources[i % len(sources)]
            content = paper_md.read_text(encoding="utf-8", errors="replace")
            figures = [p for p in paper_md.parent.iterdir() if p.suffix.lower() in {".png", ".jpg", ".jpeg"}]
            backbone = paper_md.parents[2].name.removeprefix("end2end_")
        else:
            content = (
                "## Section\n\nSome text with $x_i^2$ math and a table.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n" * 40
            )
            figures, backbone = [], "synthetic"
        task = Task.objects.create(slug=f"bench_task_{i}", version_hash=f"{i}", kind="mlr", title=f"Task {i}")
        run = ResearchRun.objects.create(task=task, backbone=backbone, source="mlrbench")
        artifact = Artifact.objects.create(
            research_run=run, stage="paper", content=content, files=[f.name for f in figures]
        )
        for f in figures:
            file_store(artifact=artifact, relative=f.name, source=f)
        papers.append(artifact)
    reviewers = [user_create(username=f"bench{i}", role="reviewer") for i in range(n_reviewers)]
    campaign = campaign_create(name="bench", rubric=rubric, artifacts=papers, reviewers=reviewers, reviewers_per_item=2)
    campaign_assign(campaign=campaign)
    out = []
    for user in reviewers:
        session = SessionStore()
        session["_auth_user_id"] = str(user.pk)
        session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
        session["_auth_user_hash"] = user.get_session_auth_hash()
        session.create()
        codes = list(user.review_assignments.values_list("code", flat=True))
        out.append({"session": session.session_key, "codes": codes})
    return {"reviewers": out, "real_papers": bool(sources)}


def serve(port: int) -> None:
    _django()
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    from django.core.wsgi import get_wsgi_application

    from review import blinding

    app = get_wsgi_application()
    timings: dict[str, list[float]] = {}
    lock = threading.Lock()

    def kind_of(environ: dict) -> str | None:
        path, method = environ["PATH_INFO"], environ["REQUEST_METHOD"]
        if not path.startswith("/review/a/"):
            return None
        if path.endswith("/draft"):
            return "draft_json"
        if "/f/" in path:
            return "figure"
        if method == "POST":
            return "draft_form"
        return "item_page" if blinding.RENDER_CACHE else "item_page_uncached"

    def timed(environ: dict, start_response):  # type: ignore[no-untyped-def]
        path = environ["PATH_INFO"]
        if path == "/__bench__/stats":
            with lock:
                body = json.dumps(timings).encode()
                timings.clear()
            start_response("200 OK", [("Content-Type", "application/json")])
            return [body]
        if path == "/__bench__/cache":
            blinding.RENDER_CACHE = environ.get("QUERY_STRING") == "on"
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"ok"]
        t0 = time.perf_counter()
        body = b"".join(app(environ, start_response))
        elapsed = (time.perf_counter() - t0) * 1000
        kind = kind_of(environ)
        if kind:
            with lock:
                timings.setdefault(kind, []).append(elapsed)
        return [body]

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True
        request_queue_size = 128

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = make_server("127.0.0.1", port, timed, server_class=Server, handler_class=Quiet)
    print("ready", flush=True)
    server.serve_forever()


# ---------------------------------------------------------------- client side


class Client:
    def __init__(self, port: int, session: str) -> None:
        self.port, self.cookies = port, {"sessionid": session}

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None
    ) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        conn.request(method, path, body=body, headers={"Cookie": cookie, "Host": "127.0.0.1", **(headers or {})})
        resp = conn.getresponse()
        data = resp.read()
        for header, value in resp.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name.strip()] = rest.split(";", 1)[0]
        conn.close()
        return resp.status, data


def reviewer_loop(
    port: int, info: dict, saves: int, think: float, form_drafts: bool, revision: list[int], errors: list
) -> None:
    client = Client(port, info["session"])
    rng = random.Random(info["session"])
    # Reviewers arrive at different moments (as people do), not in one synchronised burst.
    time.sleep(rng.uniform(0, think * saves))
    for code in info["codes"]:
        status, _ = client.request("GET", f"/review/a/{code}/")
        if status != 200:
            errors.append(f"GET item {status}")
            continue
        csrf = client.cookies.get("csrftoken", "")
        for n in range(saves):
            time.sleep(think * rng.uniform(0.5, 1.5))
            if n and n % 4 == 0:  # the reviewer reloads the page now and then (and a reload restores the draft)
                status, _ = client.request("GET", f"/review/a/{code}/")
                if status != 200:
                    errors.append(f"GET item {status}")
            scores = {
                k: {"score": rng.randint(1, 10), "justification": "text " * rng.randint(5, 60)}
                for k in DIMENSIONS[: 1 + n % 5]
            }
            if form_drafts:
                fields = {"action": "draft", "csrfmiddlewaretoken": csrf}
                for k, v in scores.items():
                    fields[f"score_{k}"], fields[f"just_{k}"] = str(v["score"]), v["justification"]
                body = urlencode(fields).encode()
                headers = {"Content-Type": "application/x-www-form-urlencoded", "Referer": "http://127.0.0.1/"}
                status, _ = client.request("POST", f"/review/a/{code}/", body, headers)
                ok = status == 302
            else:
                revision[0] += 1
                body = json.dumps({"revision": revision[0], "scores": scores, "confidence": rng.randint(1, 5)}).encode()
                headers = {"Content-Type": "application/json", "X-CSRFToken": csrf}
                status, _ = client.request("POST", f"/review/a/{code}/draft", body, headers)
                ok = status == 200
            if not ok:
                errors.append(f"draft {status}")


def run_phase(
    port: int, reviewers: list[dict], saves: int, think: float, form_drafts: bool, revisions: list
) -> tuple[dict, list, float]:
    errors: list[str] = []
    threads = [
        threading.Thread(target=reviewer_loop, args=(port, info, saves, think, form_drafts, revisions[i], errors))
        for i, info in enumerate(reviewers)
    ]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    _, body = Client(port, "").request("GET", "/__bench__/stats")
    return json.loads(body), errors, wall


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reviewers", type=int, default=20)
    parser.add_argument("--saves", type=int, default=8, help="draft saves per item opened")
    parser.add_argument(
        "--think", type=float, default=0.3, help="mean seconds between saves (autosave debounce is 0.7)"
    )
    parser.add_argument("--seed-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.seed_only:
        print(json.dumps(seed(args.reviewers)))
        return
    if args.serve:
        serve(args.serve)
        return

    tmp = tempfile.mkdtemp(prefix="review-bench-")
    env = {**os.environ, "REFEREE_VAR_DIR": tmp, "SECRET_KEY": secrets.token_urlsafe(50), "DEBUG": "0"}
    env.pop("DATABASE_URL", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    seeded = json.loads(
        subprocess.run([sys.executable, __file__, "--seed-only", "--reviewers", str(args.reviewers)], cwd=ROOT, env=env,
                       check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    )  # fmt: skip
    from config.redis_server import free_port

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port)], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        reviewers = seeded["reviewers"]
        revisions = [[0] for _ in reviewers]
        Client(port, "").request("GET", "/__bench__/cache?on")
        run_phase(port, reviewers[:2], 1, 0.0, False, revisions)  # warm-up: imports, caches, first queries
        shipped, err1, wall1 = run_phase(port, reviewers, args.saves, args.think, False, revisions)
        Client(port, "").request("GET", "/__bench__/cache?off")
        alternative, err2, wall2 = run_phase(port, reviewers, args.saves, args.think, True, revisions)
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)

    n_items = sum(len(r["codes"]) for r in reviewers)
    print(f"review_load: {len(reviewers)} concurrent reviewers, {n_items} assignments, {args.saves} saves per item, "
          f"think {args.think}s, {'released MLR-Bench papers' if seeded['real_papers'] else 'synthetic papers'}, "
          f"SQLite WAL, threaded WSGI server on loopback")  # fmt: skip
    print(f"{'server time (ms)':<34}{'n':>6}{'p50':>8}{'p95':>8}{'p99':>8}{'max':>8}")
    rows = [
        ("item page (shipped, render cache)", shipped.get("item_page", [])),
        ("draft save (shipped, JSON autosave)", shipped.get("draft_json", [])),
        ("item page, no render cache", alternative.get("item_page_uncached", [])),
        ("draft save as full form POST", alternative.get("draft_form", [])),
    ]
    for label, values in rows:
        if values:
            print(
                f"{label:<34}{len(values):>6}{pct(values, 50):>8.1f}{pct(values, 95):>8.1f}{pct(values, 99):>8.1f}{max(values):>8.1f}"
            )
    item95, draft95 = pct(rows[0][1], 95), pct(rows[1][1], 95)
    verdict = "meets" if max(item95, draft95) <= 50 else "MISSES"
    print(f"target p95 <= 50 ms: item page {item95:.1f} ms, draft save {draft95:.1f} ms -> {verdict} the target")
    print(f"comparison: uncached item page p95 {pct(rows[2][1], 95):.1f} ms "
          f"({pct(rows[2][1], 95) / max(item95, 1e-9):.1f}x the cached page); "
          f"form-POST draft p95 {pct(rows[3][1], 95):.1f} ms ({pct(rows[3][1], 95) / max(draft95, 1e-9):.1f}x the JSON save)")  # fmt: skip
    print(f"wall time: shipped phase {wall1:.1f}s, alternative phase {wall2:.1f}s; errors: {len(err1) + len(err2)}"
          + (f" (first: {(err1 + err2)[0]})" if err1 + err2 else ""))  # fmt: skip


if __name__ == "__main__":
    main()
