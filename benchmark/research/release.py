"""What the MLR-Bench importers read of a release folder (../shared/mlrbench or a clone), and what none reads.

Every importer names the files and folders it skips inside its own part; this module names the parts
themselves: a top-level folder, or a folder under agent_results/ or agent_reviews/, that no importer
reads is listed in the one command's output, never skipped silently.
"""

from __future__ import annotations

import re
from pathlib import Path

# Top level: folder -> what reads it.
TOP = {
    "tasks": "import_mlr_tasks",
    "agent_results": "the importers below",
    "agent_reviews": "the importers below",
    "ai_scientist_v2_papers": "import_mlr_results (AI Scientist v2)",
    "human_eval": "import_human_reviews, import_hallucination_labels",
}
RESULTS = [
    re.compile(r"^end2end_.+$"),
    re.compile(r"^experiments_and_writeups$"),
    re.compile(r"^ideas_and_proposals$"),
]
REVIEWS = [re.compile(r"^subset_reviews_.+$"), re.compile(r"^idea_proposal_reviews_.+$")]


def unread_folders(root: str | Path) -> list[str]:
    """Folders of the release that no importer reads, relative to root (sorted)."""
    root = Path(root)
    if not root.is_dir():
        return []
    out = [
        f"{p.name}/" for p in sorted(root.iterdir()) if p.is_dir() and not p.name.startswith(".") and p.name not in TOP
    ]
    for part, patterns in (("agent_results", RESULTS), ("agent_reviews", REVIEWS)):
        folder = root / part
        if folder.is_dir():
            out += [
                f"{part}/{p.name}/"
                for p in sorted(folder.iterdir())
                if p.is_dir() and not any(pattern.match(p.name) for pattern in patterns)
            ]
    return out
