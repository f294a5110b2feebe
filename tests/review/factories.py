"""Small factories for review tests: a rubric, papers (with stored figures), a campaign."""

from __future__ import annotations

import itertools

from accounts.roles import REVIEWER
from benchmark.models import Artifact, ResearchRun, Task
from benchmark.research.files import file_store
from judge.models import Rubric

_seq = itertools.count(1)

# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360"
    "000002000154a24f5d0000000049454e44ae426082"
)

END_TO_END_DIMENSIONS = [
    {
        "key": key,
        "name": key.capitalize(),
        "questions": [f"How good is the paper's {key}?"],
        "anchors": {"9-10": "excellent", "7-8": "good", "5-6": "fair", "3-4": "weak", "1-2": "poor"},
        "min": 1,
        "max": 10,
        "kind": "score",
    }
    for key in ("clarity", "novelty", "soundness", "significance", "overall")
]


def make_rubric(version: int = 1) -> Rubric:
    rubric, _ = Rubric.objects.get_or_create(
        stage=Rubric.Stage.END_TO_END,
        version=version,
        defaults={"name": "End-to-end", "instructions": "Review the paper.", "dimensions": END_TO_END_DIMENSIONS},
    )
    return rubric


def make_paper(
    *,
    slug: str | None = None,
    backbone: str = "claude",
    content: str | None = None,
    figures: dict[str, bytes] | None = None,
    extra_files: dict[str, str] | None = None,
    category: str = "",
    cost: float = 1.2345,
) -> Artifact:
    n = next(_seq)
    slug = slug or f"iclr2025_task{n}"
    task, _ = Task.objects.get_or_create(
        slug=slug,
        is_current=True,
        defaults={"version_hash": f"h{n}", "kind": Task.Kind.MLR, "title": slug, "category": category},
    )
    run = ResearchRun.objects.create(task=task, backbone=backbone, source=ResearchRun.Source.MLRBENCH, cost=cost)
    figures = figures if figures is not None else {"results/fig_loss.png": PNG}
    content = (
        content
        if content is not None
        else (f"# A paper on {slug}\n\nWe study $x_i^2$ and $$\\sum_{{i}} a_i$$.\n\n![Loss curve](fig_loss.png)\n")
    )
    artifact = Artifact.objects.create(
        research_run=run, stage=Artifact.Stage.PAPER, content=content, cost=cost,
        files=[*figures, *(extra_files or {})],
    )  # fmt: skip
    for rel, data in figures.items():
        file_store(artifact=artifact, relative=rel, data=data)
    for rel, text in (extra_files or {}).items():
        file_store(artifact=artifact, relative=rel, data=text.encode())
    return artifact


def make_reviewer(name: str, expertise: list[str] | None = None, password: str | None = None):
    from accounts.models import Profile
    from accounts.services import user_create

    user = user_create(username=name, email=f"{name}@example.org", role=REVIEWER, password=password)
    Profile.objects.update_or_create(user=user, defaults={"expertise": expertise or []})
    return user


def full_review_post(value: int = 7, confidence: int = 4) -> dict[str, str]:
    data = {"confidence": str(confidence)}
    for dim in END_TO_END_DIMENSIONS:
        data[f"score_{dim['key']}"] = str(value)
        data[f"just_{dim['key']}"] = f"Because {dim['key']} is fine."
    return data
