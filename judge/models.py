"""Rubrics (versioned, never edited once used) and LLM judgments of research artifacts."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from benchmark.fields import OutputTextField
from benchmark.models import Artifact, endpoint_field


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
        TRAJECTORY = "trajectory", "agent trajectory"

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

    is_default = models.BooleanField(default=False, help_text="the version new judgments are offered first")
    default_evidence = models.JSONField(
        default=dict, blank=True, help_text="why it became the default: who, when, the regression gate it passed"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["stage", "version"], name="rubric_unique_version"),
            # One default version per stage: set_default swaps it in one transaction.
            models.UniqueConstraint(fields=["stage"], condition=models.Q(is_default=True), name="rubric_one_default"),
        ]
        ordering = ["stage", "-version"]

    def __str__(self) -> str:
        return f"{self.get_stage_display()} rubric v{self.version}"

    @property
    def score_dimensions(self) -> list[dict]:
        return [d for d in self.dimensions if d.get("kind", "score") == "score"]


class Judgment(models.Model):
    """One judge model's judgment of one artifact, or of one agent run's trajectory (exactly one of
    the two), under one rubric version.

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
    artifact = models.ForeignKey(Artifact, null=True, blank=True, on_delete=models.CASCADE, related_name="judgments")
    run = models.ForeignKey(
        "benchmark.Run",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="judgments",
        help_text="trajectory judgments: the agent run judged",
    )
    rubric = models.ForeignKey(Rubric, on_delete=models.PROTECT, related_name="judgments")
    judge_model = models.CharField(max_length=200, help_text="provider:model")
    endpoint = endpoint_field(
        related_name="judgments", help_text="where the judge model is called; empty for imported judgments"
    )
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
    # Judgments of a judge experiment (regression run, probe) are kept apart from an artifact's own
    # judgments: panels, leaderboards and campaign agreement read only `experiment IS NULL`.
    experiment = models.ForeignKey(
        "JudgeExperiment", null=True, blank=True, on_delete=models.CASCADE, related_name="judgments"
    )
    repeat = models.PositiveSmallIntegerField(default=0, help_text="0-based re-run index within an experiment")
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
            models.Index(fields=["experiment", "artifact", "repeat"], name="judgment_experiment"),  # probes per item
        ]
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(artifact__isnull=False) & models.Q(run__isnull=True))
                | (models.Q(artifact__isnull=True) & models.Q(run__isnull=False)),
                name="judgment_artifact_xor_run",
            ),
        ]
        ordering = ["artifact", "judge_model", "-created_at"]

    def __str__(self) -> str:
        return f"{self.judge_model} on {self.artifact_id or f'run {self.run_id}'}"

    def score_of(self, key: str) -> float | None:
        value = (self.scores or {}).get(key)
        if isinstance(value, dict):
            value = value.get("score")
        return float(value) if isinstance(value, int | float) else None


class RubricPolicy(models.Model):
    """What an admin requires before a rubric version of a stage becomes the default.

    With `require_gate`, a version becomes the default only through a judge regression comparison
    (agreement.lab) whose candidate uses it and that passed the gate stated here: the change of
    `statistic` per criterion, with its bootstrap CI, within `margin` (equivalence) or not worse by
    more than `margin` (non-inferiority).
    """

    class Mode(models.TextChoices):
        EQUIVALENCE = "equivalence", "equivalent within the margin (CI of the change inside +/- margin)"
        NON_INFERIORITY = "noninferior", "not worse by more than the margin (CI bound on the worse side)"

    stage = models.CharField(max_length=14, choices=Rubric.Stage.choices, unique=True)
    require_gate = models.BooleanField(default=False)
    statistic = models.CharField(max_length=60, default="mad_judge_human_mean")
    margin = models.FloatField(default=0.5)
    mode = models.CharField(max_length=12, choices=Mode.choices, default=Mode.EQUIVALENCE)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.stage} policy"


class GoldSet(models.Model):
    """A pinned set of artifacts that humans reviewed: what judge configurations are run and compared on.

    The items are fixed when the set is made (never edited); `reference` names where their human
    reviews are (a review campaign), which the review layer reads to compare judges with humans.
    """

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200, unique=True)
    stage = models.CharField(max_length=12, choices=Artifact.Stage.choices)
    artifacts = models.ManyToManyField(Artifact, related_name="gold_sets")
    reference = models.CharField(max_length=200, blank=True, help_text="campaign code the human reviews come from")
    reference_label = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name


class JudgeConfig(models.Model):
    """One judge configuration: the model string and settings a judgment uses today.

    `judge_model` is the same `provider:model` string as Judgment.judge_model (model endpoints map
    onto it); `prompt_note` is a prompt variant, appended to the judge's system prompt (the prompt
    hash of every judgment records the exact text sent).
    """

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    judge_model = models.CharField(max_length=200, help_text="provider:model")
    rubric = models.ForeignKey(Rubric, on_delete=models.PROTECT, related_name="configs")
    temperature = models.FloatField(default=0.0)
    max_tokens = models.PositiveIntegerField(null=True, blank=True, help_text="blank: JUDGE_MAX_TOKENS")
    with_supplementary = models.BooleanField(default=True)
    prompt_note = models.TextField(blank=True, max_length=4000, help_text="extra instructions for the judge")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.judge_model}, {self.rubric})"


class JudgeExperiment(models.Model):
    """A judge configuration run over a gold set N times (absolute ratings), or pairwise in both orders."""

    class Kind(models.TextChoices):
        RATING = "rating", "ratings (regression run, stability, length, leniency, self-preference)"
        PAIRWISE = "pairwise", "pairwise preference, both orders (position consistency)"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        FINISHED = "finished"
        FAILED = "failed"

    MAX_REPEATS = 10

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.RATING)
    config = models.ForeignKey(JudgeConfig, on_delete=models.PROTECT, related_name="experiments")
    gold_set = models.ForeignKey(GoldSet, on_delete=models.PROTECT, related_name="experiments")
    repeats = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = OutputTextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(repeats__gte=1, repeats__lte=10), name="experiment_repeats"),
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of {self.config} on {self.gold_set} x{self.repeats}"


class PairwiseJudgment(models.Model):
    """A judge's preference between two items of the same task, shown in one order; each pair is asked both ways."""

    class Preferred(models.TextChoices):
        FIRST = "first", "the item shown first"
        SECOND = "second", "the item shown second"
        TIE = "tie"

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    experiment = models.ForeignKey(JudgeExperiment, on_delete=models.CASCADE, related_name="pairwise")
    first = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="+", help_text="shown first")
    second = models.ForeignKey(Artifact, on_delete=models.CASCADE, related_name="+", help_text="shown second")
    swapped = models.BooleanField(default=False, help_text="False: lower artifact id first; True: the swapped order")
    status = models.CharField(max_length=10, choices=Judgment.Status.choices, default=Judgment.Status.QUEUED)
    preferred = models.CharField(max_length=6, choices=Preferred.choices, blank=True)
    justification = OutputTextField(blank=True)
    raw_reply = OutputTextField(blank=True)
    error = OutputTextField(blank=True)
    prompt_hash = models.CharField(max_length=64, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    attempt_log = models.JSONField(default=list, blank=True)
    tokens_sent = models.PositiveIntegerField(default=0)
    tokens_received = models.PositiveIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["experiment", "first", "second"], name="pairwise_once_per_order"),
        ]
        ordering = ["experiment", "id"]

    def __str__(self) -> str:
        return f"{self.first_id} vs {self.second_id} ({'swapped' if self.swapped else 'as listed'})"

    @property
    def preferred_artifact_id(self) -> int | None:
        return {"first": self.first_id, "second": self.second_id}.get(self.preferred)
