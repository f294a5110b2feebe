"""Rubric versions: validating their dimensions, loading version 1 from data, adding a version."""

from __future__ import annotations

import re
from typing import Any, TextIO

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max

from judge.models import Rubric
from judge.rubric_data import BANDS, RUBRICS

KINDS = ("score", "confidence", "flag", "findings")
# Statistics a regression gate can be stated on (keys of the agreement suite) and which way is better.
GATE_STATISTICS = {
    "mad_judge_human_mean": ("lower", "mean |judge - human mean|"),
    "rmse": ("lower", "RMSE against the human mean"),
    "kappa_quadratic": ("higher", "Cohen's kappa, quadratic weights"),
    "spearman": ("higher", "Spearman correlation with the human mean"),
    "alpha_interval_with_judge": ("higher", "Krippendorff's alpha, interval, reviewers and judge"),
}
_KEY = re.compile(r"^[a-z][a-z0-9_]{0,39}$")

# Which rubric stages apply to which artifact stage (benchmark.models.Artifact.Stage values).
STAGES_FOR_ARTIFACT: dict[str, tuple[str, ...]] = {
    "idea": ("idea",),
    "proposal": ("proposal",),
    "experiment": ("experiment", "hallucination"),
    "paper": ("end2end", "writing", "hallucination"),
    "literature": (),
    "trajectory": ("trajectory",),  # review campaigns of benchmark runs (review.models.TRAJECTORY)
}
# The stages whose judge sees the experiment's code and trace unless the switch withholds it.
SUPPLEMENTARY_STAGES = ("experiment", "end2end", "hallucination")


def rubric_validate_dimensions(dimensions: Any) -> list[dict[str, Any]]:
    """Return the dimensions if they are well formed; raise ValidationError naming each fault by position and key."""
    if not isinstance(dimensions, list) or not dimensions:
        raise ValidationError("dimensions must be a non-empty JSON list")
    errors: list[str] = []
    seen: set[str] = set()
    for index, dim in enumerate(dimensions, start=1):
        where = f"dimension {index}"
        if not isinstance(dim, dict):
            errors.append(f"{where}: must be an object")
            continue
        key = dim.get("key")
        if not isinstance(key, str) or not _KEY.match(key):
            errors.append(f"{where}: key must be lower-case letters, digits or _ (got {key!r})")
        else:
            where = f"dimension {index} ({key})"
            if key in seen:
                errors.append(f"{where}: duplicate key")
            seen.add(key)
        if not isinstance(dim.get("name"), str) or not dim["name"].strip():
            errors.append(f"{where}: name is required")
        kind = dim.get("kind", "score")
        if kind not in KINDS:
            errors.append(f"{where}: kind must be one of {', '.join(KINDS)} (got {kind!r})")
            continue
        questions = dim.get("questions")
        if (
            not isinstance(questions, list)
            or not questions
            or not all(isinstance(q, str) and q.strip() for q in questions)
        ):
            errors.append(f"{where}: questions must be a non-empty list of strings")
        if kind == "findings":
            types = dim.get("types")
            if not isinstance(types, dict) or not types:
                errors.append(f"{where}: a findings dimension needs types {{name: description}}")
            continue
        low, high = dim.get("min"), dim.get("max")
        if not isinstance(low, int) or not isinstance(high, int) or isinstance(low, bool) or low >= high:
            errors.append(f"{where}: min and max must be integers with min < max (got {low!r}, {high!r})")
            continue
        anchors = dim.get("anchors")
        if not isinstance(anchors, dict) or not all(isinstance(v, str) and v.strip() for v in anchors.values()):
            errors.append(f"{where}: anchors must map each band to a description")
        elif kind == "score" and (low, high) == (1, 10):
            missing = [band for band in BANDS if band not in anchors]
            if missing:
                errors.append(f"{where}: anchors missing for band(s) {', '.join(missing)}")
        elif kind in ("flag", "confidence"):
            missing = [str(v) for v in range(low, high + 1) if str(v) not in anchors]
            if missing:
                errors.append(f"{where}: anchors missing for value(s) {', '.join(missing)}")
    if errors:
        raise ValidationError(errors)
    return dimensions


def rubric_load_defaults(*, stdout: TextIO | None = None) -> list[Rubric]:
    """Create version 1 of each stage's rubric from rubric_data when it does not exist. Idempotent."""
    loaded = []
    for entry in RUBRICS:
        rubric_validate_dimensions(entry["dimensions"])
        rubric, created = Rubric.objects.get_or_create(
            stage=entry["stage"],
            version=1,
            defaults={"name": entry["name"], "instructions": entry["instructions"], "dimensions": entry["dimensions"]},
        )
        if stdout is not None:
            stdout.write(f"{'created' if created else 'kept'} {rubric}\n")
        loaded.append(rubric)
    return loaded


def rubric_latest(stage: str) -> Rubric | None:
    return Rubric.objects.filter(stage=stage).order_by("-version").first()


def rubric_create_version(
    *, stage: str, name: str, instructions: str, dimensions: Any, created_by: Any = None
) -> Rubric:
    """Add the next version of a stage's rubric. Earlier versions (and their judgments) are untouched."""
    if stage not in Rubric.Stage.values:
        raise ValidationError(f"unknown rubric stage {stage!r}")
    rubric_validate_dimensions(dimensions)
    for _ in range(3):  # two admins saving at once: the unique constraint decides, the loser takes the next number
        try:
            with transaction.atomic():
                latest = Rubric.objects.filter(stage=stage).aggregate(v=Max("version"))["v"] or 0
                return Rubric.objects.create(
                    stage=stage,
                    version=latest + 1,
                    name=name,
                    instructions=instructions,
                    dimensions=dimensions,
                    created_by=created_by,
                )
        except IntegrityError:
            continue
    raise ValidationError("could not allocate a version number; try again")


def rubric_default(stage: str) -> Rubric | None:
    """The stage's default version: the one an admin made default, else the newest."""
    return Rubric.objects.filter(stage=stage, is_default=True).first() or rubric_latest(stage)


def rubric_policy(stage: str) -> Any:
    from judge.models import RubricPolicy

    return RubricPolicy.objects.filter(stage=stage).first() or RubricPolicy(stage=stage)


def gate_problem(rubric: Rubric, gate: dict[str, Any] | None) -> str:
    """Why `gate` does not let `rubric` become the default under its stage's policy ('' when it does)."""
    policy = rubric_policy(rubric.stage)
    if not policy.require_gate:
        return ""
    if not gate:
        return (
            f"the {rubric.get_stage_display()} policy requires a passing regression gate: compare a configuration "
            "using this version with the current default on a gold set in the judge lab, and make it the default there"
        )
    if str(gate.get("candidate_rubric")) != str(rubric.code):
        return "the regression comparison's candidate does not use this rubric version"
    wanted = {"statistic": policy.statistic, "margin": policy.margin, "mode": policy.mode}
    stated = {k: gate.get(k) for k in wanted}
    if stated != wanted:
        return f"the comparison's gate {stated} is not the policy's {wanted}"
    if gate.get("passed") is not True:
        return "the regression comparison did not pass its gate"
    return ""


def rubric_set_default(*, rubric: Rubric, user: Any, gate: dict[str, Any] | None = None) -> Rubric:
    """Make `rubric` its stage's default; refused (ValidationError) when the policy's gate is not met."""
    from django.utils import timezone

    problem = gate_problem(rubric, gate)
    if problem:
        raise ValidationError(problem)
    evidence = {
        "by": getattr(user, "username", ""),
        "at": timezone.now().isoformat(),
        "gate": gate or None,
    }
    with transaction.atomic():
        Rubric.objects.filter(stage=rubric.stage, is_default=True).exclude(pk=rubric.pk).update(is_default=False)
        rubric.is_default = True
        rubric.default_evidence = evidence
        rubric.save(update_fields=["is_default", "default_evidence"])
    return rubric
