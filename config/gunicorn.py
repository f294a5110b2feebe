"""gunicorn's settings for the HTTP side (`gunicorn -c python:config.gunicorn config.wsgi`), the same
under `make up` (scripts/up.py), in deploy/ (referee-web.service) and in the benchmarks and tests
that serve the platform. Websockets go to daphne (config/asgi.py), routed by path: nginx in
deploy/, a port of their own under `make up` (WEBSOCKET_PORT).

Every value comes from the environment through config.env's strict parsers; gunicorn reads this
module's names (https://docs.gunicorn.org/en/stable/settings.html). The bind address is given on
the command line (`--bind`): `fd://N` under `make up`, whose supervisor holds the port.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from config.env import env_int  # noqa: E402

wsgi_app = "config.wsgi:application"
# Worker processes (WEB_PROCESSES, default the CPU count), each with WEB_THREADS threads: a request
# waiting on the database or a slow client holds a thread, not a whole process.
workers = env_int("WEB_PROCESSES", os.cpu_count() or 1, minimum=1, maximum=64)
worker_class = "gthread"
threads = env_int("WEB_THREADS", 4, minimum=1, maximum=256)
# The app is imported once in the master and the workers fork from it: start-up's memory is shared
# (copy on write) and a worker replaced after max_requests is up in milliseconds.
preload_app = True
# A worker is replaced after this many requests (spread by the jitter, so that they do not all go
# at once): whatever a long-lived process accumulates (caches, fragmentation) is bounded.
max_requests = env_int("WEB_MAX_REQUESTS", 5000, minimum=0)
max_requests_jitter = env_int("WEB_MAX_REQUESTS_JITTER", 500, minimum=0)
# A request that runs longer than this is a stuck worker: gunicorn kills it and starts another.
timeout = env_int("WEB_TIMEOUT", 120, minimum=1)
graceful_timeout = 20
keepalive = 5
# Request line and headers (issue 30): a URI longer than 8190 bytes (gunicorn's maximum) is refused
# with "414 URI Too Long" and the sizes in plain words, headers past 8 kB each with 431; bodies
# are bounded by config/limits.py before anything reads them.
limit_request_line = 8190
limit_request_field_size = 8190
limit_request_fields = 100
# Behind nginx (deploy/) X-Forwarded-Proto says https; only the local proxy is believed.
forwarded_allow_ips = "127.0.0.1,::1"
accesslog = None
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
# No control socket: its default path ($HOME/.gunicorn/gunicorn.ctl) is one per user, not per
# platform, and nothing here uses gunicornc; signals (HUP, TTIN, TTOU) still work.
control_socket_disable = True
# The temporary files behind each worker's heartbeat on tmpfs, not a disk that may stall.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
