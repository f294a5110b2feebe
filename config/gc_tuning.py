"""The garbage collector of the web processes (config.wsgi, config.asgi).

A page of the review form allocates tens of thousands of container objects (the ORM's compiled
queries, the template's nodes and contexts); at CPython's default gen-0 threshold of 700 that is
a collection on every request, and every so often a full one that walks the whole heap of the
loaded project (~125,000 objects). `tune()` freezes what start-up built (it is never garbage, so
no collection walks it again) and collects gen 0 after WEB_GC_THRESHOLD allocations instead:
bench/review_load.py's item page went from 24 to 15 ms of CPU. Cycles of garbage then live a
little longer (at most a few MB per process); WEB_GC_THRESHOLD=0 keeps CPython's defaults.
"""

from __future__ import annotations

import gc

from django.conf import settings


def tune() -> None:
    threshold = int(getattr(settings, "WEB_GC_THRESHOLD", 0))
    if threshold <= 0:
        return
    gc.collect()
    gc.freeze()
    gc.set_threshold(threshold, 50, 100)
