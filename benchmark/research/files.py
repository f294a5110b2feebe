"""Files of research artifacts (figures, results, traces, code), behind Django's storage API.

Every artifact file is stored in the "artifacts" storage (`settings.STORAGES["artifacts"]`) under
the name `artifacts/<artifact code>/<relative path>`. By default it is a FileSystemStorage under
MEDIA_ROOT; on several hosts it is a shared folder or an object store (ARTIFACT_STORAGE_BACKEND,
see deploy/README.md), so a file written by one worker host is read by the web process of another.
Nothing outside this module builds a path to an artifact file: writers call `file_store`, readers
`read_bytes`/`read_text`/`open_stored`/`stored_size`, each with a relative path that passed
`clean_relative`.

The storage is never served as a public path: `benchmark.research.views.research_file` checks who
asks and serves a file only if it is listed in the artifact's `files`.
"""

from __future__ import annotations

import mimetypes
import os
import uuid
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import IO

from django.core.exceptions import SuspiciousFileOperation
from django.core.files.base import ContentFile, File
from django.core.files.storage import Storage, storages

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"}
TEXT_SUFFIXES = {".md", ".txt", ".log", ".csv", ".json", ".jsonl", ".tsv", ".yaml", ".yml"}
# Source files of an agent's code folder (kept so readers and judges can check what ran).
CODE_SUFFIXES = {".py", ".sh", ".ipynb", ".toml", ".cfg", ".r", ".jl", ".cpp", ".c", ".h", ".js", ".ts", ".rs", ".go"}
MAX_FILE_BYTES = 20 * 1024 * 1024
STORAGE_ALIAS = "artifacts"
PREFIX = "artifacts"


def artifact_storage() -> Storage:
    return storages[STORAGE_ALIAS]


def clean_relative(path: str) -> str | None:
    """A normalised relative posix path inside the artifact folder, or None if it would leave it."""
    if not path or "\x00" in path or "\\" in path:
        return None
    parts = [p for p in PurePosixPath(path).parts if p not in ("", ".")]
    if not parts or parts[0] == "/" or any(p == ".." for p in parts):
        return None
    return "/".join(parts)


def stored_name(artifact_code: object, relative: str) -> str | None:
    """The storage name of an artifact's file, or None if `relative` would leave the artifact's folder."""
    rel = clean_relative(relative)
    return None if rel is None else f"{PREFIX}/{artifact_code}/{rel}"


def _local_path_inside(storage: Storage, name: str) -> bool:
    """On a filesystem storage, the file must really be inside the storage's folder: no symlink
    anywhere on the way (a planted link in an artifact folder would otherwise serve any host file)."""
    try:
        local = storage.path(name)
    except NotImplementedError:  # an object store: names are keys, there is no link to follow
        return True
    except SuspiciousFileOperation:
        return False
    expected = os.path.join(os.path.realpath(storage.path("")), *PurePosixPath(name).parts)
    return os.path.realpath(local) == expected


def file_store(*, artifact: object, relative: str, source: Path | None = None, data: bytes | None = None) -> str:
    """Store `source` (a local file) or `data` as the artifact's file `relative`; returns the stored relative path.

    An existing file of the same name is replaced (a resumed stage writes its results again).
    A source that is a symlink is refused: its target may be anything on the host.
    """
    code = getattr(artifact, "code", artifact)
    rel = clean_relative(relative)
    if rel is None:
        raise ValueError(f"unsafe file path {relative!r}")
    if source is not None and Path(source).is_symlink():
        raise ValueError(f"{relative!r} is a symbolic link; not stored")
    name = f"{PREFIX}/{code}/{rel}"
    storage = artifact_storage()
    if storage.exists(name):
        storage.delete(name)
    if source is not None:
        with open(source, "rb") as handle:
            saved = storage.save(name, File(handle, name=PurePosixPath(rel).name))
    else:
        saved = storage.save(name, ContentFile(data or b""))
    if saved != name:  # a backend that renamed the file: the listed path would not find it
        storage.delete(saved)
        raise ValueError(f"the artifact storage stored {relative!r} as {saved!r}")
    return rel


def _readable(artifact_code: object, relative: str) -> tuple[Storage, str] | None:
    name = stored_name(artifact_code, relative)
    if name is None:
        return None
    storage = artifact_storage()
    try:
        if not storage.exists(name) or not _local_path_inside(storage, name):
            return None
    except SuspiciousFileOperation:
        return None
    return storage, name


def stored_exists(artifact_code: object, relative: str) -> bool:
    return _readable(artifact_code, relative) is not None


def stored_size(artifact_code: object, relative: str) -> int | None:
    found = _readable(artifact_code, relative)
    return None if found is None else found[0].size(found[1])


def open_stored(artifact_code: object, relative: str) -> IO[bytes] | None:
    """The stored file opened for reading (caller closes it), or None if it is not there."""
    found = _readable(artifact_code, relative)
    if found is None:
        return None
    try:
        return found[0].open(found[1], "rb")
    except (OSError, IsADirectoryError):
        return None


def read_bytes(artifact_code: object, relative: str) -> bytes | None:
    handle = open_stored(artifact_code, relative)
    if handle is None:
        return None
    with handle:
        return handle.read()


def read_text(artifact_code: object, relative: str) -> str | None:
    data = read_bytes(artifact_code, relative)
    return None if data is None else data.decode("utf-8", errors="replace")


def stored_files(artifact_code: object) -> list[str]:
    """Every relative path stored for an artifact (walks the storage with listdir)."""
    storage = artifact_storage()
    found: list[str] = []
    pending = [""]
    base = f"{PREFIX}/{artifact_code}"
    while pending:
        sub = pending.pop()
        folder = f"{base}/{sub}".rstrip("/")
        try:
            dirs, names = storage.listdir(folder)
        except (FileNotFoundError, NotADirectoryError):
            continue
        found += [f"{sub}{n}" for n in names]
        pending += [f"{sub}{d}/" for d in dirs]
    return sorted(found)


def listed_file(artifact: object, relative: str) -> str | None:
    """The clean relative path if the artifact lists it and the storage has it, else None."""
    rel = clean_relative(relative)
    if rel is None or rel not in (getattr(artifact, "files", None) or []):
        return None
    return rel if stored_exists(artifact.code, rel) else None  # type: ignore[attr-defined]


def content_type(relative: str) -> str:
    path = PurePosixPath(relative)
    if path.suffix.lower() in TEXT_SUFFIXES | CODE_SUFFIXES:  # shown as text, never run by the browser
        return "text/plain; charset=utf-8"
    guessed, _ = mimetypes.guess_type(path.name)
    return guessed or "application/octet-stream"


def is_image(relative: str) -> bool:
    return PurePosixPath(relative).suffix.lower() in IMAGE_SUFFIXES


# Literature corpora uploaded with a launch live in the same storage, so that a worker on another
# host finds them; the run's settings name them "storage:corpora/<uuid>.jsonl".
CORPUS_SCHEME = "storage:"


def corpus_store(chunks: Iterable[bytes]) -> str:
    name = f"corpora/{uuid.uuid4()}.jsonl"
    saved = artifact_storage().save(name, ContentFile(b"".join(chunks)))
    return f"{CORPUS_SCHEME}{saved}"


def corpus_open(reference: str) -> IO[bytes] | None:
    """An uploaded corpus (a "storage:" reference) opened for reading, or None if it is not there."""
    name = reference.removeprefix(CORPUS_SCHEME)
    if not name.startswith("corpora/") or clean_relative(name) != name:
        return None
    storage = artifact_storage()
    if not storage.exists(name) or not _local_path_inside(storage, name):
        return None
    return storage.open(name, "rb")
