"""Referee settings: one module, driven by the environment.

Defaults work on a laptop (SQLite, a local Redis started by `make up`); every
value read from the environment goes through a strict parser in config.env.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import (
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_json_object,
    env_list,
    env_size_mb,
    env_str,
    env_url,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("REFEREE_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _secret_key() -> str:
    """SECRET_KEY from the environment, else one generated once and kept under var/."""
    from_env = env_str("SECRET_KEY", "")
    if from_env:
        if len(from_env) < 32:
            raise ImproperlyConfigured("SECRET_KEY must be at least 32 characters long")
        return from_env
    key_file = VAR_DIR / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
SITE_URL = env_url("SITE_URL", "http://127.0.0.1:8000", schemes=("http", "https"))

# No "daphne" app: it only swaps in an ASGI `runserver`, and as an app it loads Twisted and OpenSSL
# into every process (~25 MB and ~0.5 s of start per worker and sweeper; issue 20). The web
# processes run `python -m daphne` (scripts/up.py), the browser tests daphne.server directly.
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "django_rq",
    "accounts",
    "sandbox",
    "benchmark",
    "judge",
    "review",
    "agreement",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.limits.RequestBodyLimitMiddleware",  # before anything reads a body (the CSRF check does)
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.roles",
            ],
        },
    },
]

# Database: SQLite in WAL mode by default, PostgreSQL (or anything dj-database-url reads) via DATABASE_URL.
DATABASE_URL = env_url("DATABASE_URL", None, schemes=("sqlite", "postgres", "postgresql", "pgsql"))
if DATABASE_URL:
    DATABASES = {
        "default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0, minimum=0))
    }
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool(
        "DATABASE_PREPARED_STATEMENTS", True
    ):
        # Server-side binding with prepared statements: a statement run five times on a connection is
        # prepared (psycopg's default threshold; 0 would also prepare one-off multi-statement DDL, which
        # PostgreSQL refuses), and after five more PostgreSQL keeps a generic plan for it. The request
        # paths are a few ORM queries joining up to eight tables, whose planning (3-6 ms each) cost more
        # than running them (bench/review_load.py). Off (DATABASE_PREPARED_STATEMENTS=0) behind a
        # PgBouncer older than 1.21 in transaction pooling, which cannot carry named prepared statements.
        DATABASES["default"].setdefault("OPTIONS", {}).update(
            server_side_binding=True, prepare_threshold=env_int("DATABASE_PREPARE_THRESHOLD", 5, minimum=0)
        )
    # Connections as Django's docs advise for each server. The websocket processes (daphne, ASGI:
    # config.asgi marks them) run their database calls in a thread pool, where a connection kept per
    # thread is never reused: they take connections from a pool (psycopg_pool, per process). The
    # HTTP processes (gunicorn's threads, WSGI: config.wsgi marks them) keep their connection between
    # requests (WEB_CONN_MAX_AGE) with a health check, so a request neither connects anew (a
    # PostgreSQL backend forked, ~4 ms) nor loses the prepared statements above. Workers and commands
    # run one thread each and fork work horses, which neither survives: they keep
    # DATABASE_CONN_MAX_AGE. DATABASE_POOL_SIZE=0 turns the pool off.
    DATABASE_POOL_SIZE = env_int("DATABASE_POOL_SIZE", 10, minimum=0, maximum=1000)
    if (
        DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
        and DATABASE_POOL_SIZE
        and os.environ.get("REFEREE_WEB_SERVER") == "asgi"
    ):
        DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps them (Django refuses both at once)
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = True  # a connection PostgreSQL dropped is replaced
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": min(2, DATABASE_POOL_SIZE),
            "max_size": DATABASE_POOL_SIZE,
            # A consumer waits this long for a free connection, then fails.
            "timeout": env_float("DATABASE_POOL_TIMEOUT", 10.0, minimum=0.1),
        }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "referee.sqlite3",
            "OPTIONS": {
                # WAL lets the web process read while a worker writes; IMMEDIATE avoids
                # "database is locked" upgrades from read to write transactions.
                # The write-ahead log is checkpointed by housekeeping (`checkpoint_db`), not inside a
                # commit; this many pages (4 KiB each) is the backstop when nothing else does it.
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=10000; "
                f"PRAGMA wal_autocheckpoint={env_int('SQLITE_WAL_AUTOCHECKPOINT', 10000, minimum=0)};",
                "transaction_mode": "IMMEDIATE",
            },
        }
    }
if os.environ.get("REFEREE_WEB_SERVER") == "wsgi":
    DATABASES["default"]["CONN_MAX_AGE"] = env_int("WEB_CONN_MAX_AGE", 600, minimum=0)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis: the job queue and the channel layer. `make up` starts one, sets REDIS_URL for its children
# and writes the URL to var/redis_url, so that a management command run by hand in another shell
# (REDIS_URL unset) talks to the running platform; without either, a local default server.
REDIS_URL_FILE = VAR_DIR / "redis_url"


def _redis_url() -> str:
    schemes = ("redis", "rediss", "unix")
    from_env = env_url("REDIS_URL", None, schemes=schemes)
    if from_env:
        return from_env
    try:
        started = REDIS_URL_FILE.read_text().strip()
    except FileNotFoundError:
        started = ""
    if not started:
        return "redis://127.0.0.1:6379/0"
    try:
        return str(env_url("REDIS_URL", None, {"REDIS_URL": started}, schemes=schemes))
    except ImproperlyConfigured as exc:
        raise ImproperlyConfigured(f"{REDIS_URL_FILE} (written by make up): {exc}") from None


REDIS_URL = _redis_url()

RQ_QUEUES = {
    name: {"URL": REDIS_URL, "DEFAULT_TIMEOUT": timeout}
    for name, timeout in (("runs", 6 * 3600), ("gpu", 6 * 3600), ("judge", 1800), ("default", 1800))
}
# Workers of these queues import the model SDKs once before forking (config/workers.py).
RQ = {"WORKER_CLASS": "config.workers.PreloadingWorker"}
WORKER_PRELOAD_QUEUES = ("judge",)
RQ_SHOW_ADMIN_LINK = True
RUN_WORKERS = env_int("RUN_WORKERS", 2, minimum=1, maximum=64)
# A run keeps going through a Redis outage this long (its steps are in the database; the live
# pushes retry with backoff); past it the run stops as `interrupted`, to be resumed.
RUN_REDIS_OUTAGE_LIMIT = env_float("RUN_REDIS_OUTAGE_LIMIT", 60.0, minimum=0.1)
# The worker driving a run refreshes a Redis key this often; the run reaper takes a key missing for
# RUN_HEARTBEAT_TTL seconds as a dead worker (kill -9, a lost host) and marks the run interrupted.
RUN_HEARTBEAT_EVERY = env_float("RUN_HEARTBEAT_EVERY", 5.0, minimum=0.05)
RUN_HEARTBEAT_TTL = env_float("RUN_HEARTBEAT_TTL", 30.0, minimum=0.5)
if RUN_HEARTBEAT_TTL < 3 * RUN_HEARTBEAT_EVERY:
    raise ImproperlyConfigured("RUN_HEARTBEAT_TTL must be at least 3 x RUN_HEARTBEAT_EVERY (a beat may be late)")


def _per_queue(name: str, default: str, choices: tuple[str, ...] | None = None) -> dict[str, str]:
    """`slurm` for both run queues, or per queue: `runs=rq,gpu=slurm` (a queue left out keeps `default`)."""
    raw = env_str(name, "")
    values = dict.fromkeys(("runs", "gpu"), default)
    for part in filter(None, (p.strip() for p in raw.split(","))):
        queue, sep, value = part.rpartition("=")
        queues = [queue.strip()] if sep else list(values)
        if any(q not in values for q in queues) or (choices and value.strip() not in choices):
            allowed = "|".join(choices) if choices else "a value"
            raise ImproperlyConfigured(f"{name}={raw!r}: {allowed}, or per queue such as runs={default},gpu=...")
        values.update(dict.fromkeys(queues, value.strip()))
    return values


# Who executes runs, per run queue (benchmark.runs.slurm, deploy/README.md "Slurm"): RQ workers, or
# one `sbatch` job per run on the partition (and account) named here, with these client commands.
RUN_EXECUTORS = _per_queue("RUN_EXECUTOR", "rq", ("rq", "slurm"))
SLURM_PARTITION = _per_queue("SLURM_PARTITION", "")
SLURM_ACCOUNT = env_str("SLURM_ACCOUNT", "")
# The longest --time a run's job asks for (its estimate from the run's limits is capped here).
SLURM_TIME_LIMIT_MAX = env_int("SLURM_TIME_LIMIT_MAX", 6 * 3600, minimum=60)
# The Python that runs `manage.py execute_run` on the compute node (the same path on a shared filesystem).
SLURM_PYTHON = env_str("SLURM_PYTHON", "")
# A cancelled run's job still running this long after the cancel is ended with scancel by the reaper.
SLURM_CANCEL_GRACE = env_float("SLURM_CANCEL_GRACE", 60.0, minimum=0.0)
# gunicorn's worker processes (config/gunicorn.py) and the daphne processes for websockets that
# `make up` starts (each on one shared socket; the daphnes share the channel layer).
WEB_PROCESSES = env_int("WEB_PROCESSES", os.cpu_count() or 1, minimum=1, maximum=64)
WS_PROCESSES = env_int("WS_PROCESSES", os.cpu_count() or 1, minimum=1, maximum=64)
# Where the pages open their websockets: the page's own host and port (0, behind nginx, which routes
# /ws/ to daphne), or this port on the page's host (`make up`: daphne has a port of its own).
WEBSOCKET_PORT = env_int("WEBSOCKET_PORT", 0, minimum=0, maximum=65535)
# Allocations between two gen-0 collections in the web processes (config.gc_tuning); 0: CPython's 700.
WEB_GC_THRESHOLD = env_int("WEB_GC_THRESHOLD", 20_000, minimum=0, maximum=10_000_000)

# "default" lives in each web process. "agreement" holds agreement analyses, rendered reports and
# the judge lab's statistics, keyed by a fingerprint of the data's state (agreement/cache.py),
# so an entry is never stale. It is in Redis, shared by the web processes and the RQ workers: the
# lab's statistics are computed by a job when cold (issue 30) and the page reads the job's result.
# Entries expire (cache.TIMEOUT); the same cache holds the per-user counters of cold computations.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "default"},
    "agreement": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": env_str("CHANNEL_PREFIX", "referee") + ":agreement",
    },
}
# Cold statistics of the judge lab one user may start per minute (cached results are not counted).
LAB_COLD_PER_MINUTE = env_int("LAB_COLD_PER_MINUTE", 6, minimum=1, maximum=10_000)

CHANNEL_MAX_CONNECTIONS = env_int("CHANNEL_MAX_CONNECTIONS", 1000, minimum=10, maximum=100_000)
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            # redis-py 8 reads with a 5 s socket timeout by default, the same as channels_redis's 5 s
            # BZPOPMIN: an idle websocket consumer then dies with TimeoutError. Read longer than that,
            # but not so long that a send to a Redis that stopped answering holds a run for long.
            # redis-py 8 caps a pool at 100 connections and then raises MaxConnectionsError: hundreds of
            # viewers connecting or leaving at once (a web process restart) need more (issue 20).
            "hosts": [
                {
                    "address": REDIS_URL,
                    "socket_timeout": 10,
                    "socket_connect_timeout": 5,
                    "max_connections": CHANNEL_MAX_CONNECTIONS,
                }
            ],
            "prefix": env_str("CHANNEL_PREFIX", "referee"),
            "capacity": 1000,
            "expiry": 60,
        },
    }
}

# Open websockets re-check their user's access on every access change (a group message) and, as a
# backstop for changes made behind the app's back, on this timer (accounts.consumers.AccessGuard).
WS_ACCESS_RECHECK_SECONDS = env_float("WS_ACCESS_RECHECK_SECONDS", 60.0, minimum=0.05)

# Sandboxes.
# SANDBOX_BACKEND wins; else the backend that `make up` chose for this machine and remembered in
# var/sandbox_backend.json (sandbox/choice.py says why); else docker.
SANDBOX_CHOICE_FILE = VAR_DIR / "sandbox_backend.json"


def _sandbox_backend() -> str:
    choices = ("docker", "podman", "bwrap", "local")
    if env_str("SANDBOX_BACKEND", ""):
        return env_choice("SANDBOX_BACKEND", "docker", choices)
    try:
        remembered = json.loads(SANDBOX_CHOICE_FILE.read_text()).get("backend")
    except (OSError, ValueError, AttributeError):
        remembered = None
    if not remembered:
        return "docker"
    try:
        return env_choice("SANDBOX_BACKEND", "docker", choices, {"SANDBOX_BACKEND": str(remembered)})
    except ImproperlyConfigured as exc:
        raise ImproperlyConfigured(f"{SANDBOX_CHOICE_FILE} (written by make up): {exc}") from None


SANDBOX_BACKEND = _sandbox_backend()
# This host's id in sandbox labels, disk owners and run claims; the reaper judges by pid only the
# sandboxes of its own id. Default: the hostname. Two worker pools on one machine, or hosts sharing a
# hostname, need distinct ids (deploy/README.md).
HOST_ID = env_str("REFEREE_HOST_ID", "")
if ":" in HOST_ID or any(c.isspace() for c in HOST_ID):
    raise ImproperlyConfigured(f"REFEREE_HOST_ID={HOST_ID!r}: no colon or whitespace (it is written as host:pid)")
SANDBOX_ALLOW_LOCAL = env_bool("SANDBOX_ALLOW_LOCAL", False)
SANDBOX_IMAGE = env_str("SANDBOX_IMAGE", "")
SANDBOX_MEMORY_MB = env_size_mb("SANDBOX_MEMORY", 2048)
SANDBOX_CPUS = env_float("SANDBOX_CPUS", 1.0, minimum=0.1)
SANDBOX_PIDS = env_int("SANDBOX_PIDS", 256, minimum=16)
SANDBOX_DISK_MB = env_size_mb("SANDBOX_DISK", 2048)
# Loop-mounted workspace disks (root workers): on real disk, never on tmpfs (see sandbox/disk.py).
SANDBOX_DISK_DIR = env_str("SANDBOX_DISK_DIR", "")
# bwrap sandboxes see the host's /usr unless this names a root filesystem to use instead (e.g. the
# debootstrap rootfs of the sandbox image under var/sandbox-image/<hash>/rootfs).
SANDBOX_BWRAP_ROOTFS = env_str("SANDBOX_BWRAP_ROOTFS", "") or None
SANDBOX_TMP_MB = env_size_mb("SANDBOX_TMP", 256)
# Podman (sandbox/podman.py): "auto" runs it rootless where rootless containers get their limits
# (cgroups v2, controllers delegated), else as root with the container's uids mapped to
# SANDBOX_PODMAN_UID_BASE.. (65536 of them); a root worker runs rootless podman as SANDBOX_PODMAN_USER.
SANDBOX_PODMAN_MODE = env_choice("SANDBOX_PODMAN_MODE", "auto", ("auto", "rootless", "root"))
SANDBOX_PODMAN_USER = env_str("SANDBOX_PODMAN_USER", "")
SANDBOX_PODMAN_UID_BASE = env_int("SANDBOX_PODMAN_UID_BASE", 1_000_000_000, minimum=65536)
SANDBOX_PODMAN_RUNTIME = env_str("SANDBOX_PODMAN_RUNTIME", "")
# The GPUs runs may take on this host (sandbox/gpu.py): "auto" (every GPU nvidia-smi lists, none where
# it is missing), "none", or device ids ("0,1", or NVIDIA's GPU-/MIG- UUIDs). GPU_NAME names them
# where nvidia-smi cannot. Runs of tasks that need GPUs go to the `gpu` queue, whose workers run
# on such hosts (deploy/README.md, "GPU hosts"); each run leases its own devices (benchmark.runs.gpus).
GPU_DEVICES = env_str("GPU_DEVICES", "auto")
if GPU_DEVICES.lower() not in ("auto", "none") and not all(
    re.fullmatch(r"\d+|(GPU|MIG)-[0-9A-Za-z/-]+", part.strip()) for part in GPU_DEVICES.split(",")
):
    raise ImproperlyConfigured(
        f"GPU_DEVICES={GPU_DEVICES!r}: 'auto', 'none' or comma-separated device ids such as 0,1 or GPU-<uuid>"
    )
GPU_NAME = env_str("GPU_NAME", "")
# How long a GPU run waits on its worker for devices another run holds before it fails.
GPU_LEASE_WAIT = env_float("GPU_LEASE_WAIT", 600.0, minimum=0.0)

# LLM providers. Calls go to the model endpoints admins register (benchmark.llm.endpoints); these
# base URLs only seed the default endpoints (benchmark.llm.seed). The keys are not settings: an
# endpoint names the environment variable holding its key (ANTHROPIC_API_KEY, OPENAI_API_KEY by
# default) and reads it when a call is made, so no key sits in the settings module.
ANTHROPIC_BASE_URL = env_url("ANTHROPIC_BASE_URL", None, schemes=("http", "https"))
OPENAI_BASE_URL = env_url("OPENAI_BASE_URL", None, schemes=("http", "https"))
LLM_TIMEOUT = env_float("LLM_TIMEOUT", 120.0, minimum=1.0)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 3, minimum=0, maximum=20)
JUDGE_MAX_ATTEMPTS = env_int("JUDGE_MAX_ATTEMPTS", 3, minimum=1, maximum=10)
JUDGE_MAX_TOKENS = env_int("JUDGE_MAX_TOKENS", 4096, minimum=256)
# A reply cut at the token limit is asked again with twice the budget, up to this; then recorded as truncated.
JUDGE_MAX_TOKENS_CAP = env_int("JUDGE_MAX_TOKENS_CAP", 16384, minimum=256)

# Literature search for the research pipeline and the agent's literature_search tool.
LITERATURE_PROVIDER = env_choice("LITERATURE_PROVIDER", "", ("", "openai_search", "semantic_scholar", "corpus"))
LITERATURE_CORPUS = env_str("LITERATURE_CORPUS", "")
SEMANTIC_SCHOLAR_API_KEY = env_str("SEMANTIC_SCHOLAR_API_KEY", "")

# Data released by MLGym and MLR-Bench, imported by `make up` when present.
_shared = BASE_DIR.parent / "shared"
MLGYM_DIR = env_str("MLGYM_DIR", str(_shared / "mlgym") if (_shared / "mlgym").exists() else "")
# Local copies of the Hugging Face datasets MLGym's vision and language tasks name (<dir>/<org>/<name>/,
# a save_to_disk folder or the hub's parquet files; benchmark.tasks.mlgym_hub): nothing downloads here.
MLGYM_HF_DATASETS_DIR = env_str("MLGYM_HF_DATASETS_DIR", "")
MLRBENCH_DIR = env_str("MLRBENCH_DIR", str(_shared / "mlrbench") if (_shared / "mlrbench").exists() else "")
# Which backbone's papers the human hallucination check's "MLR Agent" rows are: the release does not
# say, so make up links them only when this names one (empty: kept unlinked; links made before stay).
MLRBENCH_LABELS_BACKBONE = env_choice("MLRBENCH_LABELS_BACKBONE", "", ("", "claude", "gemini", "o4-mini"))

# Auth and mail.
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "accounts:login"
# An invitation link works once, until revoked, for this many days (accounts.models.Invitation).
INVITATION_TTL_DAYS = env_int("INVITATION_TTL_DAYS", 14, minimum=1, maximum=365)
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
EMAIL_HOST = env_str("EMAIL_HOST", "")
EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1, maximum=65535)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "referee@localhost")
# EMAIL_BACKEND: smtp (the default when EMAIL_HOST is set), console (else), file (one file a mail in
# EMAIL_FILE_PATH, default var/mail: a demo's reminders and invitations can be read there) or locmem.
_MAIL_BACKENDS = {
    "smtp": "django.core.mail.backends.smtp.EmailBackend",
    "console": "django.core.mail.backends.console.EmailBackend",
    "file": "django.core.mail.backends.filebased.EmailBackend",
    "locmem": "django.core.mail.backends.locmem.EmailBackend",
}
EMAIL_BACKEND = _MAIL_BACKENDS[env_choice("EMAIL_BACKEND", "smtp" if EMAIL_HOST else "console", tuple(_MAIL_BACKENDS))]
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(VAR_DIR / "mail"))

# Request bodies (config/limits.py): refused with 413 before a byte is read when the declared length
# is over the route's limit (by URL name; uploads only where a form takes files) or the global cap.
REQUEST_BODY_MAX = env_size_mb("REQUEST_BODY_MAX", 64) * 1024 * 1024
REQUEST_BODY_DEFAULT = 1024 * 1024  # every form and JSON endpoint
# A refused body is read and dropped for at most this long, so the client reads the 413 (config/limits.py).
REQUEST_BODY_DISCARD_SECONDS = env_float("REQUEST_BODY_DISCARD_SECONDS", 10.0, minimum=0.0)
_SIGN_IN_FORM = 16 * 1024  # posted to by anyone, signed in or not
REQUEST_BODY_LIMITS = {
    "accounts:login": _SIGN_IN_FORM,
    "accounts:invitation_accept": _SIGN_IN_FORM,
    "accounts:password_change": _SIGN_IN_FORM,
    "benchmark:research_new": REQUEST_BODY_MAX,  # corpus and figures, 10 MB each (benchmark/research/forms.py)
}

SESSION_COOKIE_HTTPONLY = True
# Django's database sessions, as shipped. Not cached_db: with its cache in Redis (the one cache all
# processes share, so that a logout in one is a logout in all), Django writes the cache after a
# database read without catching errors, and every signed-in request answered 500 while Redis was
# unreachable (tried with the Redis cache backend; tests/accounts/test_sessions.py holds the database
# backend to serving then): Redis is a transport here, never needed to serve a page.
SESSION_ENGINE = "django.contrib.sessions.backends.db"
CSRF_COOKIE_HTTPONLY = False  # the draft autosave script reads it
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
MEDIA_ROOT = VAR_DIR / "media"
# Research artifact files (figures, results, traces, code) go through this storage only
# (benchmark/research/files.py). One host: a folder under MEDIA_ROOT. Several hosts: a shared folder
# (ARTIFACT_STORAGE_LOCATION on NFS) or any storage class, e.g. django-storages'
# "storages.backends.s3.S3Storage" with its options as a JSON object in ARTIFACT_STORAGE_OPTIONS
# (deploy/README.md). With no location, FileSystemStorage follows MEDIA_ROOT.
ARTIFACT_STORAGE_BACKEND = env_str("ARTIFACT_STORAGE_BACKEND", "django.core.files.storage.FileSystemStorage")
ARTIFACT_STORAGE_OPTIONS = env_json_object("ARTIFACT_STORAGE_OPTIONS", {})
if env_str("ARTIFACT_STORAGE_LOCATION", ""):
    ARTIFACT_STORAGE_OPTIONS["location"] = env_str("ARTIFACT_STORAGE_LOCATION", "")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "artifacts": {"BACKEND": ARTIFACT_STORAGE_BACKEND, "OPTIONS": ARTIFACT_STORAGE_OPTIONS},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR"))},
}
