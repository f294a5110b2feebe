"""The RQ worker class of every queue (settings.RQ["WORKER_CLASS"]).

A forking RQ worker runs each job in a fresh work horse forked from the worker's own process, so a
module the worker process never imported is imported again by every job. The model SDKs are imported
on use (issue 20: commands and idle processes stay light), which made every judgment, a job of one
model call, pay the import of anthropic and openai (1.5-2.7 s of CPU here, about 56 MB) in its horse.
A worker serving one of settings.WORKER_PRELOAD_QUEUES (the judge queue) imports the SDK layer once,
before its first fork; the others stay light (a run's job lasts minutes, its one import is noise).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from django.conf import settings
from rq import Worker

PRELOAD = ("benchmark.llm.providers",)


class PreloadingWorker(Worker):
    def work(self, *args: Any, **kwargs: Any) -> bool:
        if set(self.queue_names()) & set(settings.WORKER_PRELOAD_QUEUES):
            for name in PRELOAD:
                import_module(name)
        return super().work(*args, **kwargs)
