"""Forms of the campaign set-up pages: add reviewers and items to a campaign, invite in bulk."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model

from accounts.roles import REVIEWER
from benchmark.models import Artifact
from review.eligibility import campaign_agent_run_ids, campaign_run_ids, identifying_members
from review.forms import artifact_label, candidate_runs, reviewer_label, run_label
from review.models import Campaign
from review.services import UNBLINDABLE
from review.setup import parse_invite_lines


def candidate_artifacts(stage: str | None = None):
    # A PDF paper with no text cannot be blinded: never offered (review.services.cannot_blind).
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
    finished runs (the field keeps its name: one items picker on the campaign page)."""

    artifacts = forms.ModelMultipleChoiceField(
        queryset=Artifact.objects.none(), widget=forms.CheckboxSelectMultiple, label="Items"
    )

    def __init__(self, *args: Any, campaign: Campaign, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["artifacts"].queryset = candidate_artifacts(campaign.stage).exclude(
            campaign_items__campaign=campaign
        )
        self.fields["artifacts"].label_from_instance = artifact_label
        if campaign.is_trajectory:
            self.fields["artifacts"].queryset = candidate_runs().exclude(campaign_items__campaign=campaign)
            self.fields["artifacts"].label_from_instance = run_label
