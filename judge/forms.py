from __future__ import annotations

import json
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from benchmark.llm import ConfigurationError, parse_model, provider_configured
from benchmark.llm.prices import KNOWN
from judge.models import Rubric, RubricPolicy
from judge.rubrics import GATE_STATISTICS, STAGES_FOR_ARTIFACT, rubric_validate_dimensions
from judge.services import MAX_JUDGES


def judge_model_choices() -> list[tuple[str, str]]:
    return [(m, m if provider_configured(m) else f"{m} (no API key configured)") for m in sorted(KNOWN)]


class JudgmentRequestForm(forms.Form):
    rubric = forms.ModelChoiceField(queryset=Rubric.objects.none(), empty_label=None, to_field_name="code")
    judge_models = forms.MultipleChoiceField(
        choices=[], required=False, widget=forms.CheckboxSelectMultiple, label="Judge models"
    )
    other_models = forms.CharField(
        required=False,
        label="Other models",
        help_text="provider:model, comma separated (e.g. compat:llama-3.1-70b on the configured OpenAI-compatible server)",
    )
    with_supplementary = forms.BooleanField(
        required=False, initial=True, label="Show the judges the experiment's code and trace"
    )

    def __init__(self, *args: Any, artifact: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        stages = STAGES_FOR_ARTIFACT.get(artifact.stage, ())
        self.fields["rubric"].queryset = Rubric.objects.filter(stage__in=stages).order_by("stage", "-version")
        if not self.is_bound and stages:  # the stage's default version first (an admin's choice, else the newest)
            from judge.rubrics import rubric_default

            default = rubric_default(stages[0])
            if default is not None:
                self.initial.setdefault("rubric", default.code)
        self.fields["rubric"].label_from_instance = lambda r: f"{r.get_stage_display()} v{r.version}: {r.name}"
        self.fields["judge_models"].choices = judge_model_choices()

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        models = list(data.get("judge_models") or [])
        for raw in (data.get("other_models") or "").split(","):
            model = raw.strip()
            if not model:
                continue
            try:
                parse_model(model)
            except ConfigurationError as exc:
                self.add_error("other_models", str(exc))
            models.append(model)
        models = list(dict.fromkeys(models))
        if not models:
            raise ValidationError("choose at least one judge model")
        if len(models) > MAX_JUDGES:
            raise ValidationError(f"at most {MAX_JUDGES} judge models per request")
        data["models"] = models
        return data


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
