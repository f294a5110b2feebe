from __future__ import annotations

import json
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from benchmark.llm.endpoints import usable_endpoints
from benchmark.llm.forms import OTHER, model_choices, model_pick
from benchmark.models import ModelEndpoint
from judge.models import Rubric, RubricPolicy
from judge.rubrics import GATE_STATISTICS, STAGES_FOR_ARTIFACT, rubric_validate_dimensions
from judge.services import MAX_JUDGES


class JudgeModelsForm(forms.Form):
    """Judges chosen among the endpoints the requester may call, like a run's model: an artifact's
    judgment request, and a trajectory campaign's (review.trajectory.views)."""

    judge_models = forms.MultipleChoiceField(
        choices=[], required=False, widget=forms.CheckboxSelectMultiple, label="Judge models"
    )
    other_endpoint = forms.ChoiceField(choices=[], required=False, label="Other models on")
    other_models = forms.CharField(
        required=False,
        label="Other models",
        help_text="model names served by the endpoint chosen above, comma separated (e.g. llama-3.1-70b)",
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        self.fields["judge_models"].choices = model_choices(user, other=False)
        open_endpoints = [(str(e.code), e.name) for e in usable_endpoints(user) if e.open_models]
        self.fields["other_endpoint"].choices = [("", "(none)")] + open_endpoints
        if not open_endpoints:
            del self.fields["other_endpoint"], self.fields["other_models"]

    @property
    def has_judges(self) -> bool:
        """Whether any endpoint offers the requester a model at all (else the page says so, not a blank list)."""
        return bool(self.fields["judge_models"].choices) or "other_endpoint" in self.fields

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        judges: list[tuple[ModelEndpoint, str]] = []
        for value in data.get("judge_models") or []:
            try:
                judges.append(model_pick(self.user, value))
            except ValidationError as exc:
                self.add_error("judge_models", exc)
        names = [n.strip() for n in (data.get("other_models") or "").split(",") if n.strip()]
        if names and not data.get("other_endpoint"):
            self.add_error("other_endpoint", "choose the endpoint that serves these models")
        for name in names if data.get("other_endpoint") else []:
            try:
                judges.append(model_pick(self.user, f"{data['other_endpoint']}/{OTHER}", name))
            except ValidationError as exc:
                self.add_error("other_models", exc)
        judges = list({(endpoint.pk, name): (endpoint, name) for endpoint, name in judges}.values())
        if not judges and not self.errors:
            raise ValidationError("choose at least one judge model")
        if len(judges) > MAX_JUDGES:
            raise ValidationError(f"at most {MAX_JUDGES} judge models per request")
        data["models"] = judges
        return data


class JudgmentRequestForm(JudgeModelsForm):
    """An artifact's judgment request: a rubric of the artifact's stage, the judges, the supplementary switch."""

    rubric = forms.ModelChoiceField(queryset=Rubric.objects.none(), empty_label=None, to_field_name="code")
    with_supplementary = forms.BooleanField(
        required=False, initial=True, label="Show the judges the experiment's code and trace"
    )
    field_order = ["rubric", "judge_models", "other_endpoint", "other_models", "with_supplementary"]

    def __init__(self, *args: Any, artifact: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, user=user, **kwargs)
        stages = STAGES_FOR_ARTIFACT.get(artifact.stage, ())
        self.fields["rubric"].queryset = Rubric.objects.filter(stage__in=stages).order_by("stage", "-version")
        if not self.is_bound and stages:  # the stage's default version first (an admin's choice, else the newest)
            from judge.rubrics import rubric_default

            default = rubric_default(stages[0])
            if default is not None:
                self.initial.setdefault("rubric", default.code)
        self.fields["rubric"].label_from_instance = lambda r: f"{r.get_stage_display()} v{r.version}: {r.name}"


class RubricVersionForm(forms.Form):
    name = forms.CharField(max_length=200)
    instructions = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}))
    dimensions = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 30, "spellcheck": "false", "class": "mono"}),
        help_text="JSON list of {key, name, kind, min, max, questions, anchors}; copied from the latest version",
    )

    def clean_dimensions(self) -> list[dict[str, Any]]:
        text = self.cleaned_data["dimensions"]
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from exc
        return rubric_validate_dimensions(value)


class RubricPolicyForm(forms.ModelForm):
    statistic = forms.ChoiceField(choices=[(k, f"{v[1]} ({v[0]} is better)") for k, v in GATE_STATISTICS.items()])
    margin = forms.FloatField(min_value=0.001, max_value=10.0, help_text="on the statistic's own scale")

    class Meta:
        model = RubricPolicy
        fields = ["require_gate", "statistic", "margin", "mode"]
        labels = {"require_gate": "Require a passing regression gate before a version becomes the default"}
