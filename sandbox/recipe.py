"""What the sandbox image is made of, and its tag: ``referee-sandbox:<hash of these inputs>``.

The recipe (this module, the Debian package list, the pinned requirements and what is pruned) is
all the tag depends on, so settings can name the default image without loading the builder
(sandbox.image) or the Docker SDK.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

IMAGES_DIR = Path(__file__).resolve().parent / "images"
REQUIREMENTS = IMAGES_DIR / "requirements.txt"
# What is removed from the image (bundled datasets the hidden splits come from) and why; the
# same prune.py runs in both builders and writes the image's manifest to MANIFEST_PATH.
PRUNE_SPEC = IMAGES_DIR / "manifest.json"
PRUNE_SCRIPT = IMAGES_DIR / "prune.py"
MANIFEST_PATH = "/etc/referee-sandbox/manifest.json"
REPOSITORY = "referee-sandbox"
SUITE = "bookworm"
MIRROR = os.environ.get("SANDBOX_DEBIAN_MIRROR", "http://deb.debian.org/debian")
# Debian packages beyond minbase: the interpreter (3.11 on bookworm), venv for pip, and procps
# so that agents (and our tests) can see their processes.
DEBIAN_PACKAGES = ("python3", "python3-venv", "procps")
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "any")
USER_UID = 1000
# Bump when the steps below change what ends up in the image (5: the pruned datasets and the
# manifest file, with the manifest label).
RECIPE_VERSION = "5"
PATH_ENV = "/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
CHANGES = (
    f"ENV PATH={PATH_ENV}",
    "ENV LANG=C.UTF-8",
    "ENV HOME=/workspace",
    f"USER {USER_UID}:{USER_UID}",
    "WORKDIR /workspace",
    'CMD ["/bin/bash"]',
)


def inputs_hash() -> str:
    digest = hashlib.sha256()
    for part in (RECIPE_VERSION, SUITE, " ".join(DEBIAN_PACKAGES), " ".join(CHANGES)):
        digest.update(part.encode() + b"\0")
    for path in (REQUIREMENTS, PRUNE_SPEC, PRUNE_SCRIPT):
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def default_tag() -> str:
    return f"{REPOSITORY}:{inputs_hash()}"


def requirement_lines() -> list[str]:
    lines = []
    for raw in REQUIREMENTS.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            lines.append(line)
    return lines
