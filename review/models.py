"""Review campaigns: items under a rubric version, reviewers, blinded assignments and their reviews.

Query shape the agreement view relies on (per campaign, per criterion, each human review's score
per item and the item's system): `Review.objects.submitted_in(campaign).score_rows()`.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from benchmark.models import Artifact, Run
from judge.models import Rubric
from review.queue_order import new_queue_secret, queue_key

# Lower-case letters and digits without look-alikes: codes are read aloud and typed by reviewers.
_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"


def new_code(length: int = 10) -> str:
    """An opaque, unguessable code (31^10 ~ 8e14): nothing about the item or the system is in it."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))


def new_item_code() -> str:
    return "i-" + new_code(6)


# A campaign reviews one stage of research artifacts, or agent trajectories (benchmark runs).
TRAJECTORY = "trajectory"
STAGE_CHOICES = [*Artifact.Stage.choices, (TRAJECTORY, "agent trajectory (benchmark run)")]


class Campaign(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "draft (reviewers see nothing)"
        OPEN = "open", "open"
        CLOSED = "closed", "closed (read-only)"

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200, unique=True)
    stage = models.CharField(max_length=12, choices=STAGE_CHOICES, default=Artifact.Stage.PAPER)
    rubric = models.ForeignKey(Rubric, on_delete=models.PROTECT, related_name="campaigns")
    reviewers_per_item = models.PositiveSmallIntegerField(default=2)
    deadline = models.DateTimeField(null=True, blank=True)
    show_supplementary = models.BooleanField(default=False, help_text="show code and trace to reviewers")
    reclaim_after_hours = models.PositiveIntegerField(
        default=72, help_text="an assignment untouched this long can be reclaimed; 0 = never"
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    blind_names = models.JSONField(
        default=list, blank=True, help_text="every system name of the items; scrubbed from every item shown"
    )
    import_faults = models.JSONField(
        default=list, blank=True, help_text="problems found by import_human_reviews: duplicated, missing, unmatched"
    )
    tells = models.JSONField(
        default=dict,
        blank=True,
        help_text="the last check for systematic tells and what was done to each (review.tells)",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Keys each reviewer's shuffled order (review.queue_order); never shown, so the order stays unpredictable.
    queue_secret = models.CharField(max_length=64, default=new_queue_secret, editable=False)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(reviewers_per_item__gte=1), name="campaign_k_positive"),
        ]
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_overdue(self) -> bool:
        return self.deadline is not None and timezone.now() > self.deadline

    @property
    def is_trajectory(self) -> bool:
        return self.stage == TRAJECTORY

    def reclaim_cutoff(self) -> Any:
        if not self.reclaim_after_hours:
            return None
        return timezone.now() - timedelta(hours=self.reclaim_after_hours)


class CampaignItem(models.Model):
    """One artifact, or one agent run (a trajectory campaign), in a campaign, under a pseudonymous
    code (admins and exports; reviewers see assignment codes). Exactly one of the two is set."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items")
    artifact = models.ForeignKey(
        Artifact, null=True, blank=True, on_delete=models.PROTECT, related_name="campaign_items"
    )
    run = models.ForeignKey(
        Run,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="campaign_items",
        help_text="trajectory items",
    )
    code = models.CharField(max_length=16, default=new_item_code)
    tags = models.JSONField(default=list, blank=True, help_text="topic tags matched against reviewer expertise")
    # The blinded render shared by the item's assignments (figure URLs are filled in per assignment),
    # stored when the item is added so that no reviewer's page pays for rendering the paper.
    rendered_html = models.TextField(blank=True)
    rendered_figures = models.JSONField(default=list, blank=True, help_text="stored paths behind the placeholders")
    rendered_key = models.CharField(max_length=64, blank=True, help_text="blinding.render_key of the stored render")
    blinding_changes = models.JSONField(
        default=list,
        blank=True,
        help_text="every cut, scrub and hidden cost of the reviewer's copy (blinding.item_changes)",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "artifact"], name="item_once_per_campaign"),
            models.UniqueConstraint(fields=["campaign", "run"], name="item_run_once_per_campaign"),
            models.UniqueConstraint(fields=["campaign", "code"], name="item_code_unique"),
            models.CheckConstraint(
                condition=(Q(artifact__isnull=False) & Q(run__isnull=True))
                | (Q(artifact__isnull=True) & Q(run__isnull=False)),
                name="item_artifact_xor_run",
            ),
        ]
        ordering = ["campaign", "id"]

    def __str__(self) -> str:
        return self.code

    @property
    def system(self) -> str:
        """The system (backbone, or the run's model) that made the item; admins and exports only, never reviewers."""
        if self.run_id:
            return self.run.agent.model or self.run.method or self.run.agent.name
        return self.artifact.research_run.backbone


class CampaignReviewer(models.Model):
    """A reviewer's membership of a campaign, with the expertise used to match items."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="members")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_memberships")
    expertise = models.JSONField(default=list, blank=True, help_text="tags; defaults to the reviewer's profile")
    max_load = models.PositiveIntegerField(
        null=True, blank=True, help_text="most items for this reviewer; blank = no cap"
    )
    active = models.BooleanField(default=True, help_text="inactive members get no new assignments")
    invitation = models.ForeignKey(
        "accounts.Invitation",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="memberships",
        help_text="the invitation sent from this campaign, if the member was invited from it (its state, resend)",
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "reviewer"], name="member_once_per_campaign")]

    def __str__(self) -> str:
        return f"{self.reviewer} in {self.campaign}"

    @property
    def tags(self) -> list[str]:
        """The expertise matched against items: the membership's own, else the profile's, else the
        invitation's (an existing account's expertise reaches its profile only when it accepts)."""
        if self.expertise:
            return list(self.expertise)
        profile = getattr(self.reviewer, "profile", None)  # callers select_related("reviewer__profile")
        if profile is not None and profile.expertise:
            return list(profile.expertise)
        return list(self.invitation.expertise) if self.invitation_id and self.invitation else []


class Conflict(models.Model):
    """A reviewer must not review one item, or any item of one system (e.g. their own lab's agent)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="conflicts")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    item = models.ForeignKey(CampaignItem, null=True, blank=True, on_delete=models.CASCADE, related_name="conflicts")
    system = models.CharField(max_length=200, blank=True, help_text="backbone label; every item of it is excluded")
    reason = models.CharField(max_length=300, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(Q(item__isnull=False) & Q(system="")) | (Q(item__isnull=True) & ~Q(system="")),
                name="conflict_item_xor_system",
            )
        ]
        indexes = [models.Index(fields=["campaign", "reviewer"], name="conflict_lookup")]  # assignment's exclusion set

    def __str__(self) -> str:
        return f"{self.reviewer} x {self.item or self.system}"


class Assignment(models.Model):
    class Status(models.TextChoices):
        ASSIGNED = "assigned", "assigned, not opened"
        STARTED = "started", "in progress"
        SUBMITTED = "submitted"
        RECLAIMED = "reclaimed", "reclaimed (untouched too long)"
        REASSIGNED = "reassigned", "moved to another reviewer"
        RETURNED = "returned", "given back (an accepted problem report)"

    # The states that hold one of the item's k slots.
    LIVE = (Status.ASSIGNED, Status.STARTED, Status.SUBMITTED)
    OPEN = (Status.ASSIGNED, Status.STARTED)

    code = models.CharField(max_length=16, default=new_code, unique=True, help_text="the reviewer's pseudonymous code")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(CampaignItem, on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_assignments")
    slot = models.PositiveSmallIntegerField(help_text="1..k while live; the DB refuses two live rows in one slot")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ASSIGNED)
    created_at = models.DateTimeField(auto_now_add=True)
    last_activity = models.DateTimeField(default=timezone.now)
    queue_key = models.BigIntegerField(
        editable=False, help_text="place in the reviewer's queue: keyed shuffle, set on save (review.queue_order)"
    )

    class Meta:
        constraints = [
            # No reviewer twice on an item, ever (also not after a reclaim: they let it lapse once).
            models.UniqueConstraint(fields=["item", "reviewer"], name="assignment_reviewer_once_per_item"),
            # At most k live assignments per item: each live one holds a distinct slot 1..k, so two
            # workers racing to fill the same gap collide here instead of over-assigning.
            models.UniqueConstraint(
                fields=["item", "slot"],
                condition=Q(status__in=["assigned", "started", "submitted"]),
                name="assignment_one_live_per_slot",
            ),
        ]
        indexes = [
            models.Index(fields=["reviewer", "status"], name="assignment_queue"),  # a reviewer's queue
            # A reviewer's items of one campaign in their keyed order: the queue page and its next
            # item (review.reviewing.views.queue), the admin's open assignments sorted by reviewer.
            models.Index(fields=["reviewer", "campaign", "queue_key"], name="assignment_queue_order"),
            models.Index(fields=["campaign", "status", "last_activity"], name="assignment_reclaim"),  # reclaim scan
        ]
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return self.code

    def save(self, *args: Any, **kwargs: Any) -> None:
        # Every way an assignment is made (planned, reassigned, imported) gets its key here; a
        # bulk_create that skips save() and sets none fails on the NOT NULL column rather than
        # putting the row first or last.
        # New rows only: an update of a row loaded without its key must not load it (or the campaign).
        if self._state.adding and self.queue_key is None:
            self.queue_key = self.keyed(self.campaign.queue_secret)
        super().save(*args, **kwargs)

    def keyed(self, secret: str) -> int:
        return queue_key(secret=secret, reviewer_id=self.reviewer_id, item_id=self.item_id)

    @property
    def is_live(self) -> bool:
        return self.status in self.LIVE


class ItemReport(models.Model):
    """A reviewer's report of a problem with an item (a blinding leak, a broken figure, the wrong
    paper...). Admins see and resolve it; accepting it gives the assignment's slot back (services).
    The reviewer's review and draft are untouched by the report itself."""

    class Reason(models.TextChoices):
        BLINDING_LEAK = "blinding_leak", "it reveals which system wrote it"
        BROKEN_FIGURE = "broken_figure", "a figure or table is broken or missing"
        WRONG_ITEM = "wrong_item", "wrong or incomplete item"
        UNREADABLE = "unreadable", "unreadable (rendering, encoding, language)"
        CONFLICT = "conflict", "conflict of interest"
        ALREADY_SEEN = "already_seen", "I have seen this work before"
        OTHER = "other", "other"

    class Status(models.TextChoices):
        OPEN = "open", "open"
        ACCEPTED = "accepted", "accepted (slot given back)"
        DISMISSED = "dismissed", "dismissed"

    NOTE_MAX = 2000
    MAX_OPEN_PER_ASSIGNMENT = 5  # a stuck button or a script cannot bury the admins in reports

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="item_reports")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="reports")
    reason = models.CharField(max_length=16, choices=Reason.choices)
    note = models.TextField(blank=True, max_length=NOTE_MAX)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["campaign", "status"], name="item_report_inbox")]  # the admins' open reports
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.assignment.code}: {self.reason} ({self.status})"


class ReviewQuerySet(models.QuerySet):
    def submitted_in(self, campaign: Campaign) -> ReviewQuerySet:
        return self.filter(assignment__campaign=campaign, status=Review.Status.SUBMITTED)

    def score_rows(self) -> Iterator[dict[str, Any]]:
        """One row per (review, criterion): item code, system, reviewer id, criterion, score, confidence.

        Long format, like review.agreement's human rows; confidence rides along on each row.
        """
        rows = self.select_related(
            "assignment__item__artifact__research_run", "assignment__item__run__agent", "assignment__reviewer"
        ).order_by("assignment__item_id", "assignment__reviewer_id")
        for review in rows:
            item = review.assignment.item
            for key, entry in (review.scores or {}).items():
                score = entry.get("score") if isinstance(entry, dict) else None
                yield {
                    "item": item.code,
                    "artifact": str(item.artifact.code) if item.artifact_id else "",
                    "run": str(item.run.code) if item.run_id else "",
                    "system": item.system,
                    "reviewer": review.assignment.reviewer.get_username(),
                    "reviewer_id": review.assignment.reviewer_id,
                    "criterion": key,
                    "score": score,
                    "confidence": review.confidence,
                }


class Review(models.Model):
    """A reviewer's scores for one assignment. Drafts autosave; submitting locks it."""

    class Status(models.TextChoices):
        DRAFT = "draft"
        SUBMITTED = "submitted"

    class Source(models.TextChoices):
        WEB = "web", "reviewed on Referee"
        IMPORTED = "imported", "imported (e.g. MLR-Bench human study)"

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="review")
    scores = models.JSONField(
        default=dict, blank=True, help_text='{"novelty": {"score": 7, "justification": "..."}} like Judgment.scores'
    )
    confidence = models.PositiveSmallIntegerField(null=True, blank=True, help_text="1-5")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.WEB)
    revision = models.PositiveIntegerField(default=0, help_text="client counter: a save with a lower one is stale")
    step_tags = models.JSONField(
        default=list,
        blank=True,
        help_text='trajectory items: [{"step": 3, "tag": "loop", "severity": "major", "note": "..."}] (review.trajectory)',
    )
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    objects = ReviewQuerySet.as_manager()

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(confidence__isnull=True) | Q(confidence__gte=1, confidence__lte=5),
                name="review_confidence_range",
            ),
            models.CheckConstraint(
                condition=Q(status="draft") | Q(submitted_at__isnull=False), name="review_submitted_has_time"
            ),
        ]
        indexes = [models.Index(fields=["status"], name="review_status")]  # exports and agreement: submitted only

    def __str__(self) -> str:
        return f"review {self.assignment.code} ({self.status})"

    def score_of(self, key: str) -> int | None:
        entry = (self.scores or {}).get(key)
        value = entry.get("score") if isinstance(entry, dict) else None
        return value if isinstance(value, int) else None


class DisagreementTag(models.Model):
    """An admin's diagnosis of why the judge and the reviewers disagree on one item and criterion
    (the agreement workbench). Admins only: reviewers never see judge scores, so never these."""

    class Cause(models.TextChoices):
        JUDGE_MISREAD = "judge_misread", "judge misread the item"
        REVIEWER_ERROR = "reviewer_error", "reviewer error"
        RUBRIC_AMBIGUITY = "rubric_ambiguity", "rubric ambiguity"
        OTHER = "other", "other"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="disagreement_tags")
    item = models.ForeignKey(CampaignItem, on_delete=models.CASCADE, related_name="disagreement_tags")
    criterion = models.CharField(max_length=100, help_text="the campaign rubric's dimension key")
    cause = models.CharField(max_length=20, choices=Cause.choices)
    note = models.TextField(blank=True, max_length=5000)
    tagged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            # One diagnosis per item and criterion: re-tagging replaces it (the workbench's upsert).
            models.UniqueConstraint(fields=["item", "criterion"], name="tag_once_per_item_criterion"),
        ]
        indexes = [models.Index(fields=["campaign", "criterion"], name="tag_summary")]  # report summary per criterion
        ordering = ["campaign", "criterion", "item_id"]

    def __str__(self) -> str:
        return f"{self.item} / {self.criterion}: {self.cause}"


class JudgeComparison(models.Model):
    """Two judge experiments on one gold set, compared against the humans who reviewed its items.

    The result (computed by a job: every agreement statistic of each, its change and a paired
    bootstrap CI of the change, and the pass/fail gate) is kept with the settings it was made with.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        FINISHED = "finished"
        FAILED = "failed"

    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    baseline = models.ForeignKey("judge.JudgeExperiment", on_delete=models.PROTECT, related_name="+")
    candidate = models.ForeignKey("judge.JudgeExperiment", on_delete=models.PROTECT, related_name="+")
    bootstrap = models.PositiveIntegerField(default=200)
    seed = models.PositiveIntegerField(default=0)
    gate_statistic = models.CharField(max_length=60, default="mad_judge_human_mean")
    gate_margin = models.FloatField(default=0.5)
    gate_mode = models.CharField(max_length=12, default="equivalence")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"comparison {self.code}"

    @property
    def passed(self) -> bool | None:
        gate = (self.result or {}).get("gate") or {}
        return gate.get("passed")


class HallucinationLabel(models.Model):
    """A human's verdict on one kind of hallucination in one paper (MLR-Bench's Hallucination Check.csv).

    `system` and `workshop` are as released; `artifact` is the imported paper they were linked to,
    when the data says which one it is (the CSV names the agent, not the backbone: see the importer).
    """

    class Kind(models.TextChoices):
        FAKED_RESULTS = "faked_results", "faked experimental results"
        HALLUCINATED_METHODOLOGY = "hallucinated_methodology", "hallucinated methodology"
        INCORRECT_CITATION = "incorrect_citation", "incorrect citations"
        MATH_ERROR = "math_error", "mathematical errors"

    class Value(models.TextChoices):
        YES = "yes"
        NO = "no"
        NOT_SURE = "not_sure", "not sure"

    system = models.CharField(max_length=100, help_text="as released: 'MLR Agent', 'AI Scientist V2'")
    workshop = models.CharField(max_length=200, help_text="task slug as released")
    kind = models.CharField(max_length=30, choices=Kind.choices)
    value = models.CharField(max_length=10, choices=Value.choices)
    artifact = models.ForeignKey(
        Artifact, null=True, blank=True, on_delete=models.SET_NULL, related_name="hallucination_labels"
    )
    source = models.CharField(max_length=500, blank=True, help_text="file and line the label came from")
    imported_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["system", "workshop", "kind"], name="hallucination_label_once"),
        ]
        indexes = [models.Index(fields=["artifact", "kind"], name="hallucination_label_paper")]  # per-paper comparison
        ordering = ["workshop", "system", "kind"]

    def __str__(self) -> str:
        return f"{self.system}/{self.workshop}: {self.kind}={self.value}"


class CampaignStatusChange(models.Model):
    """Who closed or reopened a campaign, when, and through what (review.control, or an import that
    creates the campaign closed); the latest close is the "closed on ..." reviewers see."""

    class Via(models.TextChoices):
        CONTROL = "control", "control room"
        IMPORT = "import", "imported"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="status_changes")
    from_status = models.CharField(
        max_length=8, choices=Campaign.Status.choices, blank=True, help_text="blank: the campaign was created so"
    )
    to_status = models.CharField(max_length=8, choices=Campaign.Status.choices)
    by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    at = models.DateTimeField(default=timezone.now)
    via = models.CharField(
        max_length=8, choices=Via.choices, default=Via.CONTROL, help_text="an admin's action, or the import"
    )

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["campaign", "to_status", "at"], name="campaign_status_history")]

    def __str__(self) -> str:
        return f"{self.campaign}: {self.from_status} -> {self.to_status}"


class ReviewerReminder(models.Model):
    """One reminder mail sent to a reviewer about their open work in a campaign (review.control.services):
    the record behind "last reminded ..." and the rate limit."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="reminders")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    open_items = models.PositiveIntegerField(help_text="open assignments the mail counted")
    sent_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="the admin who pressed the button; blank for the scheduled command",
    )  # fmt: skip
    sent_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-sent_at", "-id"]
        indexes = [models.Index(fields=["campaign", "reviewer", "sent_at"], name="reminder_last")]

    def __str__(self) -> str:
        return f"reminder to {self.reviewer} in {self.campaign} at {self.sent_at:%Y-%m-%d %H:%M}"
