"""The rubric form (built from the rubric version's dimensions), campaign set-up and reassignment."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model

from accounts.roles import REVIEWER
from benchmark.models import Artifact, Run
from judge.models import Rubric
from review.eligibility import identifying_members
from review.models import TRAJECTORY, Campaign
from review.services import UNBLINDABLE

MAX_JUSTIFICATION = 5000
CONFIDENCE_CHOICES = [
    ("", "choose"),
    ("1", "1 - educated guess"),
    ("2", "2 - willing to defend, not sure"),
    ("3", "3 - fairly confident"),
    ("4", "4 - confident"),
    ("5", "5 - absolutely certain"),
]


def score_dimensions(rubric: Any) -> list[dict]:
    return [d for d in rubric.dimensions if d.get("kind", "score") == "score"]


class ReviewForm(forms.Form):
    """score_<key> (min..max of the dimension, default 1-10), just_<key>, confidence (1-5).

    partial=True (drafts): every field optional, but what is given must be valid.
    """

    def __init__(self, *args: Any, rubric: Any, partial: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.dimensions = score_dimensions(rubric)
        for dim in self.dimensions:
            key, low, high = dim["key"], int(dim.get("min", 1)), int(dim.get("max", 10))
            self.fields[f"score_{key}"] = forms.TypedChoiceField(
                label=f"{dim['name']} score",
                choices=[("", "-")] + [(str(v), str(v)) for v in range(low, high + 1)],
                coerce=int,
                empty_value=None,
                required=not partial,
                error_messages={"required": f"Choose a score for {dim['name']}."},
            )
            self.fields[f"just_{key}"] = forms.CharField(
                label=f"{dim['name']} justification",
                max_length=MAX_JUSTIFICATION,
                required=not partial,
                widget=forms.Textarea(attrs={"rows": 3}),
                strip=not partial,  # drafts keep exactly what was typed
                error_messages={"required": f"Justify the {dim['name']} score."},
            )
        # The rubric's own confidence anchors when it has them (the end-to-end rubric does).
        confidence = next((d for d in rubric.dimensions if d.get("kind") == "confidence"), None)
        choices = CONFIDENCE_CHOICES
        if confidence and confidence.get("anchors"):
            anchors = confidence["anchors"]
            choices = [("", "choose")] + [
                (str(v), f"{v} - {anchors.get(str(v), '')}".rstrip(" -")) for v in range(1, 6)
            ]
        self.fields["confidence"] = forms.TypedChoiceField(
            choices=choices,
            coerce=int,
            empty_value=None,
            required=not partial,
            error_messages={"required": "Choose your confidence."},
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        for dim in self.dimensions:
            key = dim["key"]
            text = data.get(f"just_{key}")
            if not self.fields[f"just_{key}"].required or text is None:
                continue
            if not text.strip():
                self.add_error(f"just_{key}", f"Justify the {dim['name']} score.")
        return data

    def gaps(self) -> list[dict[str, str]]:
        """What a submission still lacks, in the form's order: the summary above the form links each."""
        out = []
        for dim in self.dimensions:
            key = dim["key"]
            if self.has_error(f"score_{key}") or self.has_error(f"just_{key}"):
                out.append({"anchor": f"dim-{key}", "name": dim["name"]})
        if self.has_error("confidence"):
            out.append({"anchor": "id_confidence", "name": "Confidence"})
        return out

    def scores(self) -> dict[str, dict[str, Any]]:
        """{key: {"score": int|None, "justification": str}} - the shape Judgment.scores uses."""
        out = {}
        for dim in self.dimensions:
            key = dim["key"]
            score = self.cleaned_data.get(f"score_{key}")
            text = self.cleaned_data.get(f"just_{key}") or ""
            if score is not None or text:
                out[key] = {"score": score, "justification": text}
        return out

    @staticmethod
    def initial_from(review: Any) -> dict[str, Any]:
        if review is None:
            return {}
        initial: dict[str, Any] = {"confidence": review.confidence}
        for key, entry in (review.scores or {}).items():
            if isinstance(entry, dict):
                initial[f"score_{key}"] = entry.get("score")
                initial[f"just_{key}"] = entry.get("justification", "")
        return initial


def draft_to_form_data(payload: dict[str, Any]) -> dict[str, str]:
    """The autosave JSON ({scores: {key: {score, justification}}, confidence}) as form fields."""
    data: dict[str, str] = {}
    scores = payload.get("scores")
    if not isinstance(scores, dict):
        raise ValueError("scores: expected an object")
    for key, entry in scores.items():
        if not isinstance(entry, dict):
            raise ValueError(f"scores.{key}: expected an object")
        score = entry.get("score")
        data[f"score_{key}"] = "" if score in (None, "") else str(score)
        data[f"just_{key}"] = str(entry.get("justification") or "")
    confidence = payload.get("confidence")
    data["confidence"] = "" if confidence in (None, "") else str(confidence)
    return data


def artifact_label(artifact: Artifact) -> str:
    """Admins only: the stage, task and system of a candidate item (the picker searches this text)."""
    return f"{artifact.stage}: {artifact.research_run.task.slug} / {artifact.research_run.backbone}"


def reviewer_label(user: Any) -> str:
    """Username and profile expertise: what the pickers search."""
    profile = getattr(user, "profile", None)
    tags = ", ".join(profile.expertise) if profile and profile.expertise else ""
    return f"{user.get_username()} ({tags})" if tags else user.get_username()


def run_label(run: Run) -> str:
    """Admins only: a candidate trajectory (finished agent run), searchable by task, method, source, outcome."""
    outcome = run.exit_status or run.status
    return f"trajectory: {run.task.slug} / {run.method or run.agent.name} ({run.get_source_display()}, {run.step_count} steps, {outcome})"


def candidate_runs() -> Any:
    """Finished agent runs with a trajectory (imported MLGym runs included): what a trajectory campaign reviews."""
    return (
        Run.objects.filter(status=Run.Status.FINISHED, step_count__gt=0)
        .select_related("task", "agent")
        .order_by("task__slug", "method", "-created_at")
    )


class CampaignForm(forms.ModelForm):
    artifacts = forms.ModelMultipleChoiceField(
        queryset=Artifact.objects.none(), required=False, widget=forms.CheckboxSelectMultiple, label="Items"
    )
    runs = forms.ModelMultipleChoiceField(
        queryset=Run.objects.none(), required=False, widget=forms.CheckboxSelectMultiple, label="Trajectories"
    )
    reviewers = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.none(), required=False, widget=forms.CheckboxSelectMultiple
    )
    invite = forms.CharField(
        required=False,
        label="Invite by email",
        max_length=50_000,
        widget=forms.Textarea(attrs={"rows": 4, "placeholder": "ana@uni.edu nlp, rl\nbo@lab.org theory"}),
        help_text="one a line: an email, then optional expertise tags; each gets a one-time link and joins",
    )
    invite_expertise = forms.CharField(
        required=False, max_length=500, label="Expertise of every invitee", help_text="comma-separated tags"
    )

    class Meta:
        model = Campaign
        fields = [
            "name",
            "stage",
            "rubric",
            "reviewers_per_item",
            "deadline",
            "show_supplementary",
            "reclaim_after_hours",
            "status",
        ]
        widgets = {"deadline": forms.DateTimeInput(attrs={"type": "datetime-local"})}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["artifacts"].queryset = (
            Artifact.objects.filter(status=Artifact.Status.DONE)
            .exclude(UNBLINDABLE)  # a PDF paper with no text cannot be blinded (review.services.cannot_blind)
            .select_related("research_run__task")
            .order_by("research_run__task__slug", "research_run__backbone", "stage")
        )
        self.fields["artifacts"].label_from_instance = artifact_label
        self.fields["runs"].queryset = candidate_runs()
        self.fields["runs"].label_from_instance = run_label
        self.fields["reviewers"].queryset = (
            get_user_model()
            .objects.filter(groups__name=REVIEWER, is_active=True)
            .select_related("profile")
            .order_by("username")
        )
        self.fields["reviewers"].label_from_instance = reviewer_label

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        stage = data.get("stage")
        wrong = [a for a in data.get("artifacts") or [] if a.stage != stage]
        if wrong:
            self.add_error("artifacts", f"{len(wrong)} selected item(s) are not of stage {stage}")
        runs = list(data.get("runs") or [])
        if runs and stage != TRAJECTORY:
            self.add_error(
                "runs", f"{len(runs)} selected trajectory(ies): choose the stage {TRAJECTORY} to review runs"
            )
        rubric = data.get("rubric")
        if rubric is not None and (stage == TRAJECTORY) != (rubric.stage == Rubric.Stage.TRAJECTORY):
            self.add_error("rubric", f"a {stage} campaign needs a rubric of its kind ({rubric} is not)")
        reviewers = list(data.get("reviewers") or [])
        run_ids = {a.research_run_id for a in data.get("artifacts") or []}
        agent_run_ids = {r.pk for r in runs}
        for reason in identifying_members([u.pk for u in reviewers], run_ids, agent_run_ids).values():
            self.add_error("reviewers", f"{reason}: an account that can see runs or judgments cannot review them.")
        from review.setup import parse_invite_lines  # review.setup imports the services, which import forms' models

        data["invite_lines"], errors = parse_invite_lines(data.get("invite") or "")
        for error in errors:
            self.add_error("invite", error)
        return data


class ReassignForm(forms.Form):
    reviewer = forms.ModelChoiceField(queryset=get_user_model().objects.none())

    def __init__(self, *args: Any, campaign: Campaign, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["reviewer"].queryset = (
            get_user_model()
            .objects.filter(review_memberships__campaign=campaign, review_memberships__active=True)
            .order_by("username")
        )


class ConflictForm(forms.Form):
    """A conflict of one reviewer with one item (by its code) or with every item of a system."""

    reviewer = forms.ModelChoiceField(queryset=get_user_model().objects.none())
    item_code = forms.CharField(required=False, max_length=16, label="Item code")
    system = forms.CharField(required=False, max_length=200, label="or system (backbone label)")
    reason = forms.CharField(required=False, max_length=300)

    def __init__(self, *args: Any, campaign: Campaign, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        self.fields["reviewer"].queryset = (
            get_user_model().objects.filter(review_memberships__campaign=campaign).order_by("username")
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        code, system = (data.get("item_code") or "").strip(), (data.get("system") or "").strip()
        if bool(code) == bool(system):
            raise forms.ValidationError("Give either an item code or a system, not both.")
        data["item"] = None
        if code:
            data["item"] = self.campaign.items.filter(code=code).first()
            if data["item"] is None:
                self.add_error("item_code", f"No item {code} in this campaign.")
        return data
