"""Forms of the campaign pages: create a campaign, reassign one assignment, record a conflict of
interest, add reviewers and items to a campaign, invite in bulk; the labels its pickers search."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model

from accounts.roles import REVIEWER
from benchmark.models import Artifact, Run
from judge.models import Rubric
from review.assignment.eligibility import campaign_agent_run_ids, campaign_run_ids, identifying_members
from review.blinding.services import UNBLINDABLE
from review.campaigns.setup import parse_invite_lines
from review.models import TRAJECTORY, Campaign


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
            .exclude(UNBLINDABLE)  # a PDF paper with no text cannot be blinded (review.blinding.services.cannot_blind)
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


def candidate_artifacts(stage: str | None = None):
    # A PDF paper with no text cannot be blinded: never offered (review.blinding.services.cannot_blind).
    rows = (
        Artifact.objects.filter(status=Artifact.Status.DONE).exclude(UNBLINDABLE).select_related("research_run__task")
    )
    if stage:
        rows = rows.filter(stage=stage)
    return rows.order_by("research_run__task__slug", "research_run__backbone", "stage")


class InviteFields(forms.Form):
    """Bulk invitation: pasted lines (email, then tags), tags for all, and the links' lifetime."""

    emails = forms.CharField(
        label="Emails",
        max_length=50_000,
        widget=forms.Textarea(attrs={"rows": 5, "placeholder": "ana@uni.edu nlp, rl\nbo@lab.org theory"}),
        help_text="one reviewer a line: an email, then optional expertise tags",
    )
    expertise = forms.CharField(required=False, max_length=500, help_text="comma-separated tags for every invitee")
    days = forms.IntegerField(
        min_value=1, max_value=365, initial=settings.INVITATION_TTL_DAYS, label="Link expires after (days)"
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        data["lines"], errors = parse_invite_lines(data.get("emails") or "")
        for error in errors:
            self.add_error("emails", error)
        if not data["lines"] and not errors:
            self.add_error("emails", "Give at least one email.")
        data["tags"] = [t for t in (data.get("expertise") or "").replace(";", ",").split(",") if t.strip()]
        return data


class InviteForm(InviteFields):
    campaign = forms.ModelChoiceField(
        queryset=Campaign.objects.none(), required=False, help_text="the invitees join it (optional)"
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["campaign"].queryset = Campaign.objects.exclude(status=Campaign.Status.CLOSED).order_by("name")


class MembersAddForm(forms.Form):
    """Existing reviewer accounts to add to a campaign (those not in it yet)."""

    reviewers = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.none(), widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args: Any, campaign: Campaign, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        self.fields["reviewers"].queryset = (
            get_user_model()
            .objects.filter(groups__name=REVIEWER, is_active=True)
            .exclude(review_memberships__campaign=campaign)
            .select_related("profile")
            .order_by("username")
        )
        self.fields["reviewers"].label_from_instance = reviewer_label

    def clean_reviewers(self) -> list[Any]:
        reviewers = list(self.cleaned_data["reviewers"])
        refused = identifying_members(
            [u.pk for u in reviewers], campaign_run_ids(self.campaign), campaign_agent_run_ids(self.campaign)
        )
        if refused:
            raise forms.ValidationError(
                [f"{r}: an account that can see runs or judgments cannot review them." for r in refused.values()]
            )
        return reviewers


class ItemsAddForm(forms.Form):
    """Finished artifacts of the campaign's stage that are not in it yet; for a trajectory campaign,
    finished runs (the field keeps its name: one items picker on the campaign page). The field takes
    any artifact (run) so that a refused pick is named with its reason (another stage, already in
    the campaign, not finished or not blindable), not as "not one of the available choices"."""

    artifacts = forms.ModelMultipleChoiceField(
        queryset=Artifact.objects.none(), widget=forms.CheckboxSelectMultiple, label="Items"
    )

    def __init__(self, *args: Any, campaign: Campaign, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.campaign = campaign
        field = self.fields["artifacts"]
        if campaign.is_trajectory:
            field.queryset, field.label_from_instance = Run.objects.select_related("task", "agent"), run_label
            self.eligible = candidate_runs()
        else:
            field.queryset = Artifact.objects.select_related("research_run__task")
            field.label_from_instance = artifact_label
            self.eligible = candidate_artifacts(campaign.stage)
        field.error_messages["invalid_choice"] = "no item %(value)s exists"
        field.error_messages["required"] = "choose at least one item"

    def clean_artifacts(self) -> list[Any]:
        picked = list(self.cleaned_data["artifacts"])
        ids = [o.pk for o in picked]
        present = set(
            self.eligible.model.objects.filter(pk__in=ids, campaign_items__campaign=self.campaign).values_list(
                "pk", flat=True
            )
        )
        eligible = set(self.eligible.filter(pk__in=ids).values_list("pk", flat=True))
        stage = self.campaign.stage
        kind = "finished runs with a trajectory" if self.campaign.is_trajectory else f"finished {stage} items"
        errors = []
        if present:
            errors.append(f"{len(present)} already in this campaign")
        wrong = [] if self.campaign.is_trajectory else [o for o in picked if o.stage != stage]
        if wrong:
            errors.append(f"{len(wrong)} of another stage ({', '.join(sorted({o.stage for o in wrong}))}), not {stage}")
        if other := [o for o in picked if o.pk not in eligible and o.pk not in present and o not in wrong]:
            errors.append(f"{len(other)} not among the {kind} that can be blinded")
        if errors:
            raise forms.ValidationError(f"{'; '.join(errors)}. Only {kind} not in the campaign yet can be added.")
        return picked
