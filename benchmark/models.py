"""Tasks, agents, runs and their trajectories, research-pipeline artifacts, leaderboards."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from benchmark.fields import OutputJSONField, OutputTextField


class Task(models.Model):
    """One version of a benchmark task. Versions are rows: a changed folder is a new row, never an edit."""

    class Kind(models.TextChoices):
        MLGYM = "mlgym", "MLGym-style task"
        MLR = "mlr", "MLR-Bench research task"

    class Direction(models.TextChoices):
        MAX = "max", "higher is better"
        MIN = "min", "lower is better"

    class DataStatus(models.TextChoices):
        OK = "ok", "data present"
        MISSING = "missing", "data missing"
        NOT_NEEDED = "none", "no data needed"

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    slug = models.SlugField(max_length=200)
    version_hash = models.CharField(max_length=64, help_text="sha256 of the task folder's content")
    is_current = models.BooleanField(default=True)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    title = models.CharField(max_length=300)
    description = models.TextField(blank=True, help_text="markdown")
    config = models.JSONField(default=dict, blank=True)
    metric = models.CharField(max_length=100, blank=True)
    direction = models.CharField(max_length=3, choices=Direction.choices, default=Direction.MAX)
    baseline_scores = models.JSONField(
        default=dict, blank=True, help_text="computed per version by the isolated evaluator"
    )
    category = models.CharField(max_length=100, blank=True)
    source = models.CharField(max_length=100, blank=True, help_text="builtin, mlgym, mlrbench, ...")
    path = models.CharField(max_length=500, blank=True, help_text="folder the version was loaded from")
    data_status = models.CharField(max_length=10, choices=DataStatus.choices, default=DataStatus.NOT_NEEDED)
    data_detail = models.TextField(blank=True, help_text="what is missing and where it was looked for")
    venue = models.CharField(max_length=50, blank=True)
    year = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["slug", "version_hash"], name="task_unique_version"),
            # Exactly one current version per slug: the task browser and the launch form list current ones.
            models.UniqueConstraint(fields=["slug"], condition=models.Q(is_current=True), name="task_one_current"),
        ]
        indexes = [models.Index(fields=["kind", "is_current", "slug"], name="task_browse")]  # task lists by kind
        ordering = ["slug", "-created_at"]

    def __str__(self) -> str:
        return f"{self.slug}@{self.version_hash[:8]}"


class AgentConfig(models.Model):
    """A model with its settings. `model` reads `provider:model`, or `baseline` / `replay` for model-free agents."""

    class Kind(models.TextChoices):
        MODEL = "model", "LLM agent"
        BASELINE = "baseline", "baseline (no model)"
        REPLAY = "replay", "replay of a stored trajectory"

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.MODEL)
    model = models.CharField(max_length=200, blank=True, help_text="provider:model, e.g. anthropic:claude-sonnet-4-5")
    base_url = models.URLField(blank=True, help_text="OpenAI-compatible server (vLLM, Ollama, llama.cpp)")
    temperature = models.FloatField(default=0.0)
    top_p = models.FloatField(default=0.95)
    max_steps = models.PositiveIntegerField(default=50)
    cost_limit = models.FloatField(default=4.0, help_text="USD per run")
    context_limit = models.PositiveIntegerField(default=128_000, help_text="tokens")
    history_window = models.PositiveIntegerField(default=5, help_text="last N observations kept in full")
    price_input_per_mtok = models.FloatField(default=0.0, help_text="USD per million input tokens")
    price_output_per_mtok = models.FloatField(default=0.0, help_text="USD per million output tokens")
    tools = models.JSONField(default=list, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class RunGroup(models.Model):
    """A set of runs launched together (N runs x tasks), or one import; leaderboards filter by it."""

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="run_groups"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        FINISHED = "finished"
        FAILED = "failed"
        CANCELLED = "cancelled"
        INTERRUPTED = "interrupted"

    class Source(models.TextChoices):
        REFEREE = "referee", "run on Referee"
        MLGYM = "mlgym", "imported from MLGym"

    ACTIVE = (Status.QUEUED, Status.RUNNING)

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="runs")
    agent = models.ForeignKey(AgentConfig, on_delete=models.PROTECT, related_name="runs")
    group = models.ForeignKey(RunGroup, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    shared_with = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="shared_runs")
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.REFEREE)
    method = models.CharField(max_length=200, blank=True, help_text="leaderboard method name (agent + model)")
    replay_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replays")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    exit_status = models.CharField(max_length=60, blank=True, help_text="MLGym vocabulary: submitted, exit_cost, ...")
    error = OutputTextField(blank=True)
    step_count = models.PositiveIntegerField(default=0)
    tokens_sent = models.PositiveBigIntegerField(default=0)
    tokens_received = models.PositiveBigIntegerField(default=0)
    api_calls = models.PositiveIntegerField(default=0)
    cost = models.FloatField(default=0.0, help_text="USD")
    best_attempt = models.FloatField(
        null=True, blank=True, help_text="best priority-metric score over validations and submission"
    )
    best_submission = models.FloatField(
        null=True, blank=True, help_text="priority-metric score of the final submission"
    )
    params = OutputJSONField(default=dict, blank=True, help_text="launch limits, run index, import metadata")
    worker_name = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["owner", "-created_at"], name="run_owner_recent"),  # a researcher's run list
            models.Index(fields=["status"], name="run_status"),  # the reaper's scan of active runs
            models.Index(fields=["task", "method"], name="run_task_method"),  # leaderboard grouping
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"run {self.code}"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE

    @property
    def wall_time(self) -> float | None:
        if not self.started_at:
            return None
        end = self.finished_at
        if end is None:
            from django.utils import timezone

            end = timezone.now()
        return (end - self.started_at).total_seconds()


class Step(models.Model):
    """One agent step. Appending is one INSERT; a trajectory is never rewritten."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    thought = OutputTextField(blank=True)
    action = OutputTextField(blank=True)
    observation = OutputTextField(blank=True)
    raw_response = OutputTextField(blank=True)
    state = OutputJSONField(default=dict, blank=True)
    execution_time = models.FloatField(default=0.0, help_text="seconds spent executing the action")
    tokens_sent = models.PositiveIntegerField(default=0)
    tokens_received = models.PositiveIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # Also the index for "steps of run R after index i" (the websocket catch-up query).
            models.UniqueConstraint(fields=["run", "index"], name="step_unique_index"),
        ]
        ordering = ["run", "index"]

    def __str__(self) -> str:
        return f"step {self.index} of {self.run_id}"


class Score(models.Model):
    class Kind(models.TextChoices):
        VALIDATE = "validate", "validate (dev split)"
        SUBMIT = "submit", "submit (test split)"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="scores")
    step = models.ForeignKey(Step, null=True, blank=True, on_delete=models.SET_NULL, related_name="scores")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    metrics = OutputJSONField(default=dict, blank=True)
    primary = models.FloatField(null=True, blank=True, help_text="the task's priority metric, when present and finite")
    error = OutputTextField(blank=True, help_text="evaluation error, shown instead of a score")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["run", "kind"], name="score_run_kind")]  # best attempt / submission per run
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.kind} score of {self.run_id}"


class ResearchRun(models.Model):
    """An MLR-Agent run: idea -> literature -> proposal -> experiment -> paper, on one MLR task."""

    class Mode(models.TextChoices):
        END_TO_END = "end2end", "end to end"
        STEPWISE = "stepwise", "one stage from given inputs"

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        FINISHED = "finished"
        FAILED = "failed"
        CANCELLED = "cancelled"
        INTERRUPTED = "interrupted"

    class Source(models.TextChoices):
        REFEREE = "referee", "run on Referee"
        MLRBENCH = "mlrbench", "imported from MLR-Bench"
        STEPWISE = "stepwise", "MLR-Bench stepwise"

    # Released data: ownerless, read-only, visible to every researcher.
    RELEASED = (Source.MLRBENCH, Source.STEPWISE)

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="research_runs")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="research_runs"
    )
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.REFEREE)
    backbone = models.CharField(max_length=200, help_text="provider:model, or the released backbone label")
    mode = models.CharField(max_length=10, choices=Mode.choices, default=Mode.END_TO_END)
    stages = models.JSONField(default=list, blank=True, help_text="stages this run executes, in order")
    settings = models.JSONField(default=dict, blank=True, help_text="literature provider, experiment agent limits, ...")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    error = OutputTextField(blank=True)
    tokens_sent = models.PositiveBigIntegerField(default=0)
    tokens_received = models.PositiveBigIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["owner", "-created_at"], name="research_owner_recent")]  # a researcher's list
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"research run {self.code}"


class Artifact(models.Model):
    """A stage output of a research run. Files (figures, code) live under MEDIA_ROOT/artifacts/<code>/."""

    class Stage(models.TextChoices):
        IDEA = "idea"
        LITERATURE = "literature", "literature review"
        PROPOSAL = "proposal"
        EXPERIMENT = "experiment"
        PAPER = "paper"

    class Status(models.TextChoices):
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    research_run = models.ForeignKey(ResearchRun, on_delete=models.CASCADE, related_name="artifacts")
    stage = models.CharField(max_length=12, choices=Stage.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DONE)
    content = OutputTextField(blank=True, help_text="markdown")
    data = OutputJSONField(default=dict, blank=True, help_text="structured output: references, results, trace summary")
    files = models.JSONField(default=list, blank=True, help_text="relative paths of stored files")
    experiment_run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="artifacts")
    tokens_sent = models.PositiveBigIntegerField(default=0)
    tokens_received = models.PositiveBigIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    error = OutputTextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # One artifact per stage of a run; re-running a stage replaces its row (resumable pipeline).
            models.UniqueConstraint(fields=["research_run", "stage"], name="artifact_one_per_stage"),
        ]
        ordering = ["research_run", "created_at"]

    def __str__(self) -> str:
        return f"{self.stage} of {self.research_run_id}"


class Leaderboard(models.Model):
    """A computed leaderboard. AUP depends on the method set and tau_max, so both are stored with it."""

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    methods = models.JSONField(default=list)
    tasks = models.JSONField(default=list)
    filters = models.JSONField(default=dict, blank=True)
    tau_max = models.FloatField(null=True, blank=True)
    results = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name
