"""Tasks, agents, runs and their trajectories, research-pipeline artifacts, leaderboards."""

from __future__ import annotations

import math
import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

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

    def baseline_value(self) -> float | None:
        return baseline_value(self.baseline_scores, self.metric)


def baseline_value(scores: dict | None, metric: str) -> float | None:
    """The baseline's priority-metric score that leaderboards rank against: the test-split score
    Referee computed for this version (benchmark.tasks.baselines.baseline_compute), else the score an
    import stored under the metric's name (MLGym's released baselines); None when there is none."""
    scores = scores or {}
    test = scores.get("test")
    value = test.get("primary") if isinstance(test, dict) else scores.get(metric)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


STARTER_CODE = "starter-code"


class EndpointPolicy(models.Model):
    """The admin's switches for model endpoints that researchers supply (one row, pk=1)."""

    researcher_endpoints = models.BooleanField(
        default=False, help_text="researchers may add their own endpoints (never given a server key)"
    )
    allowed_networks = models.TextField(
        blank=True,
        help_text="private IP ranges those endpoints may reach anyway (CIDR, one per line), e.g. 10.20.0.0/16",
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "endpoint policy"  # one row; the admin would say "Endpoint policys"

    def __str__(self) -> str:
        return "endpoint policy"

    @classmethod
    def current(cls) -> EndpointPolicy:
        """The policy row, or the default (researcher endpoints off) unsaved: reading writes nothing."""
        return cls.objects.filter(pk=1).first() or cls(pk=1)

    def networks(self) -> list[str]:
        from benchmark.llm.netguard import parse_networks

        return [str(net) for net in parse_networks(self.allowed_networks)]


class ModelEndpoint(models.Model):
    """Where model calls go: provider, base URL, the models offered with their prices, and the key.

    Shared endpoints are registered by admins for everyone. Personal ones are supplied by a
    researcher for their own runs, only while the admin allows it: they never use a server key
    (no environment source), and every connection they make passes the SSRF guard. A stored key is
    encrypted (benchmark.llm.keys) and never shown again; pages say only whether one is set.
    """

    class Scope(models.TextChoices):
        SHARED = "shared", "shared (registered by an admin)"
        PERSONAL = "personal", "personal (supplied by a researcher)"

    class Provider(models.TextChoices):
        ANTHROPIC = "anthropic", "Anthropic"
        OPENAI = "openai", "OpenAI"
        COMPAT = "compat", "OpenAI-compatible (vLLM, Ollama, llama.cpp, ...)"

    class KeySource(models.TextChoices):
        NONE = "none", "no key"
        ENV = "env", "an environment variable of the server"
        STORED = "stored", "stored encrypted in the database"

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=100)
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.SHARED)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="model_endpoints",
        help_text="personal endpoints: the researcher who may use it; shared: who added it",
    )
    provider = models.CharField(max_length=10, choices=Provider.choices)
    # Not a URLField: Django's validator refuses hosts without a dot (http://gpu-box:8000/v1), which
    # are what local inference servers use; benchmark.llm.endpoints validates it instead.
    base_url = models.CharField(max_length=500, blank=True, help_text="empty: the provider's public API")
    offers = models.JSONField(
        default=list, blank=True, help_text='[{"model": ..., "input_per_mtok": 3.0, "output_per_mtok": 15.0}, ...]'
    )
    open_models = models.BooleanField(default=False, help_text="any model name may be asked for, not only the listed")
    key_source = models.CharField(max_length=10, choices=KeySource.choices, default=KeySource.NONE)
    key_env_var = models.CharField(max_length=100, blank=True, help_text="name of the variable holding the key")
    key_ciphertext = models.TextField(blank=True, editable=False)
    key_saved_at = models.DateTimeField(null=True, blank=True, editable=False)
    enabled = models.BooleanField(default=True)
    seed = models.CharField(
        max_length=20, blank=True, editable=False, help_text="which default (seeded from the environment) this is"
    )
    last_check = models.JSONField(default=dict, blank=True, editable=False, help_text="the last test call's result")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["name"], condition=models.Q(scope="shared"), name="endpoint_shared_unique_name"
            ),
            models.UniqueConstraint(
                fields=["owner", "name"], condition=models.Q(scope="personal"), name="endpoint_personal_unique_name"
            ),
            models.UniqueConstraint(fields=["seed"], condition=~models.Q(seed=""), name="endpoint_one_per_seed"),
        ]
        indexes = [models.Index(fields=["scope", "enabled", "name"], name="endpoint_choices")]  # launch forms
        ordering = ["scope", "name"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_personal(self) -> bool:
        return self.scope == self.Scope.PERSONAL

    @property
    def model_names(self) -> list[str]:
        return [str(o.get("model")) for o in self.offers if o.get("model")]

    def offers_model(self, name: str) -> bool:
        return bool(name) and (self.open_models or name in self.model_names)

    @property
    def has_stored_key(self) -> bool:
        return bool(self.key_ciphertext)

    def set_key(self, plaintext: str) -> None:
        """Encrypt and keep `plaintext` (save() the row afterwards); the plaintext is not kept anywhere."""
        from django.utils import timezone

        from benchmark.llm.keys import encrypt

        self.key_ciphertext = encrypt(plaintext, context=str(self.code))
        self.key_saved_at = timezone.now()

    def clear_key(self) -> None:
        self.key_ciphertext = ""
        self.key_saved_at = None

    def clean(self) -> None:
        from django.core.exceptions import ValidationError

        from benchmark.llm.validation import endpoint_problems

        problems = endpoint_problems(self, networks=lambda: EndpointPolicy.current().networks())
        if problems:
            raise ValidationError(problems)


def endpoint_field(*, related_name: str, help_text: str) -> models.ForeignKey:
    """Where a row's model calls go. PROTECT: an endpoint that was used stays, for the record (disable it)."""
    return models.ForeignKey(
        ModelEndpoint, null=True, blank=True, on_delete=models.PROTECT, related_name=related_name, help_text=help_text
    )


class AgentConfig(models.Model):
    """A model with its settings. `model` reads `provider:model`, or `baseline` / `replay` for model-free agents."""

    class Kind(models.TextChoices):
        MODEL = "model", "LLM agent"
        # The task's own baseline, no model; its runs are named STARTER_CODE, apart from the
        # leaderboards' reference row "baseline" (the task's computed baseline score).
        BASELINE = "baseline", "starter code (the task's baseline, no model)"
        REPLAY = "replay", "replay of a stored trajectory"

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.MODEL)
    model = models.CharField(max_length=200, blank=True, help_text="provider:model, e.g. anthropic:claude-sonnet-4-5")
    endpoint = endpoint_field(
        related_name="agents", help_text="where the model is called; empty for model-free and imported agents"
    )
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

    @property
    def label(self) -> str:
        """The agent as people name it: the model and the endpoint it is called at, not the stored
        `provider:model` ("compat:ux3-agent"); a model-free agent by what it is."""
        if self.kind == self.Kind.BASELINE:
            return "starter code (no model)"
        if self.kind == self.Kind.REPLAY:
            return "replay (no model)"
        if not self.model:
            return self.name
        provider, _, name = self.model.partition(":")
        name = name or provider
        return f"{name} on {self.endpoint.name}" if self.endpoint_id else name


class RunGroup(models.Model):
    """A set of runs launched together (N runs x tasks), or one import; leaderboards filter by it."""

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    # What the researcher called the launch and why (the launch form's optional name and note): shown
    # on the list and the run page, searched by the list's "Name or note" filter. Blank: unnamed.
    title = models.CharField(max_length=200, blank=True)
    note = models.TextField(blank=True, max_length=2000)
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
        # Cancel was asked while a worker drives the run: it stops before its next command (one in
        # flight is interrupted), commits no further step, records its costs, then says cancelled.
        CANCELLING = "cancelling"
        FINISHED = "finished"
        FAILED = "failed"
        CANCELLED = "cancelled"
        INTERRUPTED = "interrupted"

    class Source(models.TextChoices):
        REFEREE = "referee", "run on Referee"
        MLGYM = "mlgym", "imported from MLGym"

    ACTIVE = (Status.QUEUED, Status.RUNNING, Status.CANCELLING)

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="runs")
    agent = models.ForeignKey(AgentConfig, on_delete=models.PROTECT, related_name="runs")
    group = models.ForeignKey(RunGroup, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.REFEREE)
    method = models.CharField(max_length=200, blank=True, help_text="leaderboard method name (agent + model)")
    replay_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replays")
    # A fork starts from step `fork_step` of `fork_of`: steps 1..fork_step are copied from it (marked
    # state["forked_from"]), replayed into a fresh sandbox, and a chosen agent goes on from there.
    fork_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="forks")
    fork_step = models.PositiveIntegerField(null=True, blank=True, help_text="the parent's step the fork goes on from")
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
    environment = models.JSONField(
        default=dict,
        blank=True,
        help_text="what the run ran on: image, image_digest, task_hash, dataset_hash, evaluator_hash, network "
        "(empty for imported results: MLGym's own environment, not recorded)",
    )

    class Executor(models.TextChoices):
        RQ = "rq", "RQ worker"
        SLURM = "slurm", "Slurm"

    worker_name = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Who was asked to execute the run (settings.RUN_EXECUTORS) and, on Slurm, its latest job's id.
    executor = models.CharField(max_length=10, choices=Executor.choices, default=Executor.RQ)
    slurm_job_id = models.CharField(max_length=32, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["owner", "-created_at"], name="run_owner_recent"),  # a researcher's run list
            models.Index(fields=["status"], name="run_status"),  # the reaper's scan of active runs
            models.Index(fields=["task", "method"], name="run_task_method"),  # leaderboard grouping
            # The runs list's default order (newest first, ties by id): a page is read off the index.
            models.Index(fields=["-created_at", "-id"], name="run_recent"),
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


class RunShare(models.Model):
    """Read access to a run for a researcher who does not own it, until revoked.

    A revoked share stays as a row (who shared, who revoked, when): the run page then tells its
    former viewer that access was withdrawn instead of pretending the run never existed.
    """

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="shares")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="run_shares")
    shared_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            # One live share per (run, user); revoked ones pile up as history.
            models.UniqueConstraint(
                fields=["run", "user"], condition=models.Q(revoked_at__isnull=True), name="runshare_one_live"
            ),
        ]
        # "runs shared with me" in visible_runs: user's live shares.
        indexes = [models.Index(fields=["user", "revoked_at"], name="runshare_user_live")]
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.run} shared with {self.user}"

    @property
    def is_live(self) -> bool:
        return self.revoked_at is None


class Step(models.Model):
    """One agent step. Appending is one INSERT; a trajectory is never rewritten."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    thought = OutputTextField(blank=True)
    action = OutputTextField(blank=True)
    observation = OutputTextField(blank=True)
    raw_response = OutputTextField(blank=True)
    state = OutputJSONField(default=dict, blank=True)
    execution_time = models.FloatField(
        null=True, blank=True, default=0.0, help_text="seconds spent executing the action; null = unknown (import)"
    )
    tokens_sent = models.PositiveIntegerField(default=0)
    tokens_received = models.PositiveIntegerField(default=0)
    cost = models.FloatField(default=0.0)
    # A default rather than auto_now_add: the recorder sets it before the INSERT, so that `wire`
    # (encoded before the INSERT too) carries the very timestamp the row holds.
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    wire = models.TextField(
        blank=True,
        editable=False,
        help_text="the step as the live stream sends it (JSON, encoded once when recorded); "
        "empty for imported steps, which are encoded when read",
    )

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


class StepNote(models.Model):
    """A researcher's annotation of one step: a comment and tags, shown to everyone who sees the run
    and exported beside the .traj (notes.json), never inside the trajectory itself."""

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="notes")
    step = models.ForeignKey(Step, on_delete=models.CASCADE, related_name="notes")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="step_notes"
    )
    body = models.TextField()
    tags = models.JSONField(default=list, blank=True, help_text="short lowercase labels")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["run", "created_at"], name="stepnote_run")]  # the run page's notes
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"note on {self.step}"


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
        AI_SCIENTIST = "aisci_v2", "AI Scientist v2 (MLR-Bench release)"

    # Released data: ownerless, read-only, visible to every researcher.
    RELEASED = (Source.MLRBENCH, Source.STEPWISE, Source.AI_SCIENTIST)

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="research_runs")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="research_runs"
    )
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.REFEREE)
    backbone = models.CharField(max_length=200, help_text="provider:model, or the released backbone label")
    endpoint = endpoint_field(
        related_name="research_runs", help_text="where the backbone is called; empty for released runs"
    )
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
    """A stage output of a research run. Files (figures, code) live in the "artifacts" storage
    (benchmark/research/files.py), named artifacts/<code>/<relative path>."""

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
        INTERRUPTED = "interrupted"  # a fault outside the stage (Redis away too long); run it again

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    research_run = models.ForeignKey(ResearchRun, on_delete=models.CASCADE, related_name="artifacts")
    stage = models.CharField(max_length=12, choices=Stage.choices)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.DONE)
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
