#!/usr/bin/env bash
# Build (or reuse) the sandbox image without a registry; prints the tag. Needs root, debootstrap
# and a running Docker engine. Same as `python manage.py build_sandbox_image`.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
exec "$PY" manage.py build_sandbox_image "$@"
