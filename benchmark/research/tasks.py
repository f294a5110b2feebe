"""MLR-Bench research tasks: read the released folder, find its data faults, store them as Task rows.

The 201 tasks are workshop calls for papers, one markdown file each, named
`<venue><year>_<slug>.md`. The whole text is the agent's prompt input, so it is stored as
released; known faults are found by looking at the text (not from a hard-coded list) and
recorded on each task (`config["faults"]`) so the task page can show them next to the text:

- swapped bodies: a task whose heading names one workshop while its body describes another
  one's, and that other task's heading matches this body (neurips2024_wtp and
  neurips2024_video_language_models in the release);
- near-duplicate workshops: the same workshop recurring across years with (almost) the same
  call text (word-trigram Jaccard similarity >= NEAR_DUPLICATE).
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from benchmark.models import Task

SOURCE = "mlrbench"
ATTRIBUTION = (
    "Task text from MLR-Bench (github.com/chchenhui/mlrbench, MIT License, Copyright (c) 2025 Hui Chen), "
    "adapted from the call for papers of the workshop named above."
)
# The paper's categories (MLR-Bench, section 3; only totals were released, no per-task labels).
CATEGORIES = [
    "Trustworthy AI",
    "AI for Science",
    "LLM/VLM",
    "ML Theory",
    "ML Systems",
    "Reinforcement Learning",
    "Computer Vision",
    "Multimodality",
    "Others",
]
NEAR_DUPLICATE = 0.5  # trigram Jaccard; recurring workshops sit at 0.5-1.0, unrelated ones below 0.35
_NAME = re.compile(r"^(?P<venue>[a-z]+)(?P<year>\d{4})_(?P<slug>[A-Za-z0-9_]+)$")
_GENERIC_HEADINGS = {"about", "about the workshop", "overview", "introduction", "call for papers"}
_STOPWORDS = set(
    "a an and the of for in on to with from at by workshop workshops new its is are we our as or be "
    "learning machine ml ai models model large".split()
)


@dataclass
class TaskFile:
    slug: str
    venue: str
    year: int
    workshop: str
    title: str
    body: str
    path: Path
    faults: list[dict[str, Any]] = field(default_factory=list)

    @property
    def version_hash(self) -> str:
        return hashlib.sha256(self.body.encode("utf-8")).hexdigest()


@dataclass
class ImportReport:
    created: int = 0
    unchanged: int = 0
    updated: int = 0
    errors: list[str] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [
            f"MLR-Bench tasks: {len(self.tasks)} read, {self.created} new, {self.updated} new versions, "
            f"{self.unchanged} unchanged, {len(self.errors)} errors"
        ]
        out += [f"ERROR {e}" for e in self.errors]
        out += [f"FAULT {f}" for f in self.faults]
        return out


def tasks_dir(path: str | Path) -> Path:
    """Accept the tasks folder itself, the released data folder or a clone of the MLR-Bench repository."""
    root = Path(path)
    if (root / "tasks").is_dir():
        return root / "tasks"
    return root


def _title(text: str, slug: str) -> tuple[str, bool]:
    """The first markdown heading, unless it is a generic one ("Overview"); else a name from the slug."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            heading = stripped.lstrip("#").strip()
            if heading and heading.lower().rstrip(":") not in _GENERIC_HEADINGS:
                return heading[:300], True
        break
    return slug.replace("_", " ").upper() if len(slug) <= 6 else slug.replace("_", " ").title(), False


def _body_after_heading(text: str) -> str:
    lines = text.strip().splitlines()
    if lines and lines[0].lstrip().startswith("#"):
        lines = lines[1:]
    return "\n".join(lines)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _title_terms(title: str) -> set[str]:
    return {w for w in _words(title) if w not in _STOPWORDS and len(w) > 2}


def _coverage(title: str, body: str) -> float:
    """Share of the title's content words that the body mentions."""
    terms = _title_terms(title)
    if not terms:
        return 1.0
    body_words = set(_words(body))
    # crude stemming: "touch" matches "touching", "video-language" matches "video" + "language"
    hits = sum(1 for t in terms if t in body_words or any(w.startswith(t[:5]) for w in body_words if len(t) >= 5))
    return hits / len(terms)


def _trigrams(text: str) -> set[tuple[str, str, str]]:
    words = _words(text)
    return set(zip(words, words[1:], words[2:], strict=False))


def read_tasks(path: str | Path, report: ImportReport) -> list[TaskFile]:
    folder = tasks_dir(path)
    if not folder.is_dir():
        report.errors.append(f"{folder}: not a folder (give the MLR-Bench repository or its tasks/ folder)")
        return []
    found: list[TaskFile] = []
    for file in sorted(folder.glob("*.md")):
        match = _NAME.match(file.stem)
        if not match:
            report.errors.append(f"{file.name}: name is not <venue><year>_<slug>.md; skipped")
            continue
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            report.errors.append(f"{file.name}: unreadable ({exc}); skipped")
            continue
        if not text.strip():
            report.errors.append(f"{file.name}: empty file; skipped")
            continue
        title, from_heading = _title(text, match["slug"])
        task = TaskFile(
            slug=file.stem,
            venue=match["venue"].upper() if match["venue"] != "neurips" else "NeurIPS",
            year=int(match["year"]),
            workshop=match["slug"],
            title=title,
            body=text,
            path=file,
        )
        if not from_heading:
            task.faults.append(
                {
                    "kind": "no_title",
                    "detail": f"no workshop name in a heading; title {title!r} derived from the file name",
                }
            )
        found.append(task)
    if not found and not report.errors:
        report.errors.append(f"{folder}: no <venue><year>_<slug>.md files found")
    _find_swaps(found)
    _find_near_duplicates(found)
    return found


def _find_swaps(tasks: list[TaskFile]) -> None:
    """A pair whose headings each match the other's body clearly better than their own."""
    bodies = {t.slug: _body_after_heading(t.body) for t in tasks}
    own = {t.slug: _coverage(t.title, bodies[t.slug]) for t in tasks}
    weak = [t for t in tasks if own[t.slug] <= 0.5]
    for a, b in itertools.combinations(weak, 2):
        a_in_b, b_in_a = _coverage(a.title, bodies[b.slug]), _coverage(b.title, bodies[a.slug])
        if a_in_b >= 0.75 and b_in_a >= 0.75 and a_in_b - own[a.slug] >= 0.25 and b_in_a - own[b.slug] >= 0.25:
            for this, other in ((a, b), (b, a)):
                this.faults.append(
                    {
                        "kind": "swapped_body",
                        "other": other.slug,
                        "detail": (
                            f"the heading names {this.title!r} but the body describes {other.title!r}: "
                            f"the bodies of {this.slug} and {other.slug} are swapped in the release "
                            "(kept as released, since the released runs saw this text)"
                        ),
                    }
                )


def _find_near_duplicates(tasks: list[TaskFile]) -> None:
    grams = {t.slug: _trigrams(t.body) for t in tasks}
    for a, b in itertools.combinations(tasks, 2):
        ga, gb = grams[a.slug], grams[b.slug]
        if not ga or not gb:
            continue
        similarity = len(ga & gb) / len(ga | gb)
        if similarity >= NEAR_DUPLICATE:
            for this, other in ((a, b), (b, a)):
                this.faults.append(
                    {
                        "kind": "near_duplicate",
                        "other": other.slug,
                        "similarity": round(similarity, 2),
                        "detail": (
                            f"near-duplicate of {other.slug} ({other.venue} {other.year}): "
                            f"{similarity:.0%} of word trigrams shared - the same workshop recurring"
                        ),
                    }
                )


def fault_lines(tasks: list[TaskFile]) -> list[str]:
    lines = []
    seen_pairs: set[tuple[str, str, str]] = set()
    for task in tasks:
        for fault in task.faults:
            other = fault.get("other")
            if other:
                key = (fault["kind"], *sorted((task.slug, other)))
                if key in seen_pairs:
                    continue
                seen_pairs.add(key)
            lines.append(f"{task.slug}: {fault['kind']}: {fault['detail']}")
    return lines


def import_mlr_tasks(path: str | Path) -> ImportReport:
    """Create or version the Task rows of every readable task file; idempotent."""
    report = ImportReport()
    files = read_tasks(path, report)
    report.faults = fault_lines(files)
    for task_file in files:
        report.tasks.append(task_file.slug)
        try:
            outcome = _store(task_file)
        except Exception as exc:  # one bad row never stops the others
            report.errors.append(f"{task_file.path.name}: not stored ({type(exc).__name__}: {exc})")
            continue
        setattr(report, outcome, getattr(report, outcome) + 1)
    return report


def _store(task_file: TaskFile) -> str:
    config = {
        "workshop": {"venue": task_file.venue, "year": task_file.year, "slug": task_file.workshop},
        "attribution": ATTRIBUTION,
        "faults": task_file.faults,
    }
    digest = task_file.version_hash
    with transaction.atomic():
        current = Task.objects.select_for_update().filter(slug=task_file.slug, is_current=True).first()
        if current is not None and current.version_hash == digest:
            # Same text: refresh what is derived (fault notes), never the text or the admin's category.
            if current.config != config or current.title != task_file.title:
                current.config = config
                current.title = task_file.title
                current.save(update_fields=["config", "title"])
            return "unchanged"
        category = current.category if current is not None else ""
        if current is not None:
            current.is_current = False
            current.save(update_fields=["is_current"])
        existing = Task.objects.filter(slug=task_file.slug, version_hash=digest).first()
        if existing is not None:  # the text went back to an older version: that row is current again
            existing.is_current = True
            existing.config = config
            existing.save(update_fields=["is_current", "config"])
            return "updated"
        Task.objects.create(
            slug=task_file.slug,
            version_hash=digest,
            is_current=True,
            kind=Task.Kind.MLR,
            title=task_file.title,
            description=task_file.body,
            config=config,
            category=category,
            source=SOURCE,
            path=str(task_file.path),
            data_status=Task.DataStatus.NOT_NEEDED,
            venue=task_file.venue,
            year=task_file.year,
        )
    return "created" if current is None else "updated"
