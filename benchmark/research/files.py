"""Files of research artifacts (figures, results, traces) under MEDIA_ROOT/artifacts/<artifact code>/.

MEDIA_ROOT is never served as a public path: `benchmark.research.views.research_file` checks who asks
and serves a file only if it is listed in the artifact's `files`.
"""

from __future__ import annotations

import mimetypes
import shutil
from pathlib import Path, PurePosixPath

from django.conf import settings

from benchmark.models import Artifact

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"}
TEXT_SUFFIXES = {".md", ".txt", ".log", ".csv", ".json", ".jsonl", ".tsv", ".yaml", ".yml"}
# Source files of an agent's code folder (kept so readers and judges can check what ran).
CODE_SUFFIXES = {".py", ".sh", ".ipynb", ".toml", ".cfg", ".r", ".jl", ".cpp", ".c", ".h", ".js", ".ts", ".rs", ".go"}
MAX_FILE_BYTES = 20 * 1024 * 1024


def artifact_dir(artifact: Artifact) -> Path:
    return Path(settings.MEDIA_ROOT) / "artifacts" / str(artifact.code)


def clean_relative(path: str) -> str | None:
    """A normalised relative posix path inside the artifact folder, or None if it would leave it."""
    if not path or "\x00" in path or "\\" in path:
        return None
    parts = [p for p in PurePosixPath(path).parts if p not in ("", ".")]
    if not parts or parts[0] == "/" or any(p == ".." for p in parts):
        return None
    return "/".join(parts)


def file_store(*, artifact: Artifact, relative: str, source: Path | None = None, data: bytes | None = None) -> str:
    """Copy `source` (or write `data`) to the artifact's folder at `relative`; returns the stored relative path."""
    rel = clean_relative(relative)
    if rel is None:
        raise ValueError(f"unsafe file path {relative!r}")
    target = artifact_dir(artifact) / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    if source is not None:
        shutil.copyfile(source, target)
    else:
        target.write_bytes(data or b"")
    return rel


def file_path(artifact: Artifact, relative: str) -> Path | None:
    """The stored file for `relative` if the artifact lists it and it exists, else None."""
    rel = clean_relative(relative)
    if rel is None or rel not in (artifact.files or []):
        return None
    path = artifact_dir(artifact) / rel
    return path if path.is_file() else None


def content_type(path: Path) -> str:
    if path.suffix.lower() in TEXT_SUFFIXES | CODE_SUFFIXES:  # shown as text, never run by the browser
        return "text/plain; charset=utf-8"
    guessed, _ = mimetypes.guess_type(path.name)
    return guessed or "application/octet-stream"


def is_image(relative: str) -> bool:
    return PurePosixPath(relative).suffix.lower() in IMAGE_SUFFIXES
