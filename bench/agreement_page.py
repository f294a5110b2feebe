"""Benchmark: the agreement page as a summary with each criterion's evidence fetched when opened,
beside the previous full page (every criterion's tables and charts inline), in the same run.

Run: python bench/agreement_page.py [--items 30,1000] [--repeat 3]

A campaign of N items x 5 criteria x (3 humans + 2 judges) in a throw-away SQLite database
(bench/agreement.py's seed), read through the real views (Django's test client, an admin session,
default settings). For each size it prints the summary page's bytes and server time (cold: nothing
cached, and cached), each criterion fragment's bytes and server time (after the page, so from the
cached analysis), and the previous full page's bytes: the same page with the summary's criterion
stubs replaced by every criterion's full section and the charts' JSON, rendered by the same
templates the downloadable report uses (what the page sent before this change), and its render time.
Target (issue 33): the summary loads in <= 1 s.

The scores are synthetic and only time the code; they are never shown as results of anything.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# bench/agreement.py's seed and helpers, loaded by path: its module name is the app's.
_spec = importlib.util.spec_from_file_location("bench_agreement", Path(__file__).with_name("agreement.py"))
_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_bench)
_django, _ms, seed_campaign = _bench._django, _bench._ms, _bench.seed_campaign


def _kb(n: int) -> str:
    return f"{n / 1024:8.1f} KB"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", default="30,1000", help="campaign sizes")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-agreement-page-") as tmp:
        _django(tmp)
        from django.template.loader import render_to_string
        from django.test import Client
        from django.utils.html import json_script

        from accounts.services import user_create
        from agreement import cache as agreement_cache
        from agreement.report import context as report_context
        from agreement.report.selectors import campaign_analysis, tags_summary
        from agreement.report.views import _form

        admin = user_create(username="bench_admin", role="admin")
        client = Client()
        client.force_login(admin)
        print(f"agreement page: summary + per-criterion fragments vs the previous full page; median of {args.repeat}")
        for n in (int(x) for x in args.items.split(",")):
            campaign, _ = seed_campaign(n, 3 if n <= 30 else 10)
            url = f"/agreement/{campaign.code}/"

            def get(path: str, **headers: str) -> tuple[float, int, str]:
                t0 = time.perf_counter()
                r = client.get(path, **headers)
                elapsed = time.perf_counter() - t0
                assert r.status_code == 200, (path, r.status_code)
                return elapsed, len(r.content), r.content.decode()

            # Wall and this process's CPU time: the machine is shared, so the wall time includes
            # waiting for a CPU; the CPU time is what the page itself costs.
            cold, cold_cpu = [], []
            for _ in range(args.repeat):
                agreement_cache.cache_clear()
                c0 = time.process_time()
                cold.append(get(url)[0])
                cold_cpu.append(time.process_time() - c0)
            hot = [get(url) for _ in range(args.repeat)]
            page = hot[-1][2]
            n_crit = page.count('<details class="criterion"')
            frags = []
            for c in range(n_crit):
                runs = [get(f"{url}criteria/{c}/", HTTP_X_FRAGMENT="1") for _ in range(args.repeat)]
                frags.append((statistics.median(r[0] for r in runs), runs[-1][1]))

            # The previous full page: the summary's lazy criteria replaced by every full section and all charts.
            class Req:
                GET = {}

            c_obj, form = _form(Req(), str(campaign.code))
            assert form.is_valid()
            s = form.settings()
            analysis = campaign_analysis(campaign=c_obj, rubric=form.rubrics[s["rubric"]], settings=s)
            t0 = time.perf_counter()
            report = report_context.report(
                analysis.result, progress=analysis.progress, tags_summary=tags_summary(campaign=c_obj)
            )
            full_body = render_to_string("agreement/report/_body.html", {"body": report["body"]})
            full_body += json_script(analysis.charts, "agreement-charts")
            t_full = time.perf_counter() - t0
            # The page's body runs from the coverage section to the licence line.
            start = page.index('<section id="coverage">')
            end = page.index("</small></p>", start) + len("</small></p>")
            old_bytes = len((page[:start] + full_body + page[end:]).encode())
            print(f"{n} items x 5 criteria:")
            print(f"  summary page   {_kb(hot[-1][1])}  server cold {_ms(statistics.median(cold))} "
                  f"(CPU {_ms(statistics.median(cold_cpu))}), "
                  f"cached {_ms(statistics.median(r[0] for r in hot))}  (target <= 1 s)")  # fmt: skip
            for c, (t, b) in enumerate(frags):
                print(f"  criterion {c} fragment {_kb(b)}  server {_ms(t)}")
            print(f"  all fragments  {_kb(sum(b for _, b in frags))}")
            print(f"  previous full page {_kb(old_bytes)}  (its sections' context + render alone {_ms(t_full)})")


if __name__ == "__main__":
    main()
