"""Rubrics (versioned, never edited once used) and LLM judgments of research artifacts."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from benchmark.fields import OutputTextField
from benchmark.models import Artifact


class Rubric(models.Model):
    """One version of a stage's rubric. A new version is a new row; judgments keep the one they used.

    `dimensions` is a list of
    {"key": "novelty", "name": "Novelty", "questions": [...], "anchors": {"9-10": "...", "7-8": ..., "5-6": ..., "3-4": ..., "1-2": ...},
     "min": 1, "max": 10, "kind": "score" | "flag" | "findings"}.
    """

    class Stage(models.TextChoices):
        IDEA = "idea"
        PROPOSAL = "proposal"
        EXPERIMENT = "experiment"
        WRITING = "writing"
        END_TO_END = "end2end", "end to end (paper)"
        HALLUCINATION = "hallucination", "hallucination audit"

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    stage = models.CharField(max_length=14, choices=Stage.choices)
    version = models.PositiveIntegerField()
    name = models.CharField(max_length=200)
    instructions = models.TextField(help_text="what the judge (and the human reviewer) is asked to do")
    dimensions = models.JSONField(default=list)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["stage", "version"], name="rubric_unique_version")]
        ordering = ["stage", "-version"]

    def __str__(self) -> str:
        return f"{self.get_stage_display()} rubric v{self.version}"

    @property
    def score_dimensions(self) -> list[dict]:
        return [d for d in self.dimensions if d.get("kind", "score") == "score"]


class Judgment(models.Model):
    """One judge model's judgment of one artifact under one rubric version.

    A failed judgment keeps the reply and the error and has no scores: nothing is made up.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        TRUNCATED = "truncated", "truncated (cut at the token limit)"

    # Finished without a review: shown as failures, never scored.
    UNSCORED = (Status.FAILED, Status.TRUNCATED)

    class Source(models.TextChoices):
        REFEREE = "referee", "judged on Referee"
        MLRBENCH = "mlrbench", "imported from MLR-Bench"

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    artifact = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="judgments")
    rubric = models.ForeignKey(Rubric, on_delete=models.PROTECT, related_name="judgments")
    judge_model = models.CharField(max_length=200, help_text="provider:model")
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.REFEREE)
    temperature = models.FloatField(default=0.0)
    with_supplementary = models.BooleanField(default=True, help_text="the judge saw the code and trace")
    prompt_hash = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    raw_reply = OutputTextField(blank=True, help_text="the last reply, kept also when it failed validation")
    scores = models.JSONField(
        default=dict, blank=True, help_text='{"novelty": {"score": 7, "justification": "..."}, ...}'
    )
    findings = models.JSONField(default=list, blank=True, help_text="hallucination audit: typed findings with evidence")
    error = OutputTextField(blank=True)
    repairs = models.JSONField(
        default=list, blank=True, help_text="what was repaired in the accepted reply (code fence, trailing commas, ...)"
    )
    attempt_log = models.JSONField(
        default=list, blank=True, help_text="every attempt: reply, validation error, tokens, cost (audit of retries)"
    )
    source_path = models.CharField(max_length=500, blank=True, help_text="imported judgments: the file they came from")
    tokens_sent = models.PositiveIntegerField(default=0)
    tokens_received = models.PositiveIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["artifact", "rubric", "status"], name="judgment_artifact"
            ),  # an artifact's judgments panel
            models.Index(
                fields=["rubric", "judge_model", "status"], name="judgment_rubric_model"
            ),  # agreement per campaign
        ]
        ordering = ["artifact", "judge_model", "-created_at"]

    def __str__(self) -> str:
        return f"{self.judge_model} on {self.artifact_id}"

    def score_of(self, key: str) -> float | None:
        value = (self.scores or {}).get(key)
        if isinstance(value, dict):
            value = value.get("score")
        return float(value) if isinstance(value, int | float) else None
