"""Forms of the judge lab (admins): gold sets, judge configurations, experiments, comparisons."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from agreement.lab.services import MAX_COMPARISON_BOOTSTRAP
from benchmark.llm import ConfigurationError, parse_model
from judge.models import GoldSet, JudgeConfig, JudgeExperiment, Rubric, RubricPolicy
from judge.rubrics import GATE_STATISTICS
from review.models import Campaign


class GoldSetForm(forms.Form):
    campaign = forms.ModelChoiceField(queryset=Campaign.objects.order_by("name"), to_field_name="code")
    name = forms.CharField(max_length=200)


class JudgeConfigForm(forms.Form):
    name = forms.CharField(max_length=200, required=False)
    judge_model = forms.CharField(max_length=200, help_text="provider:model, e.g. anthropic:claude-sonnet-4-5")
    rubric = forms.ModelChoiceField(queryset=Rubric.objects.order_by("stage", "-version"), to_field_name="code")
    temperature = forms.FloatField(min_value=0.0, max_value=2.0, initial=0.0)
    max_tokens = forms.IntegerField(
        min_value=256, max_value=64_000, required=False, help_text="blank: JUDGE_MAX_TOKENS"
    )
    with_supplementary = forms.BooleanField(required=False, initial=True, label="show the judge the code and trace")
    prompt_note = forms.CharField(
        required=False, max_length=4000, widget=forms.Textarea(attrs={"rows": 3}), label="prompt variant (appended)"
    )

    def clean_judge_model(self) -> str:
        model = self.cleaned_data["judge_model"].strip()
        try:
            parse_model(model)
        except ConfigurationError as exc:
            raise ValidationError(str(exc)) from exc
        return model


class ExperimentForm(forms.Form):
    config = forms.ModelChoiceField(queryset=JudgeConfig.objects.select_related("rubric"), to_field_name="code")
    gold_set = forms.ModelChoiceField(queryset=GoldSet.objects.all(), to_field_name="code")
    kind = forms.ChoiceField(choices=JudgeExperiment.Kind.choices)
    repeats = forms.IntegerField(min_value=1, max_value=JudgeExperiment.MAX_REPEATS, initial=1)


class ComparisonForm(forms.Form):
    baseline = forms.ModelChoiceField(queryset=JudgeExperiment.objects.select_related("config"), to_field_name="code")
    candidate = forms.ModelChoiceField(queryset=JudgeExperiment.objects.select_related("config"), to_field_name="code")
    bootstrap = forms.IntegerField(min_value=0, max_value=MAX_COMPARISON_BOOTSTRAP, initial=200)
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, initial=0)
    gate_statistic = forms.ChoiceField(choices=[(k, v[1]) for k, v in GATE_STATISTICS.items()])
    gate_margin = forms.FloatField(min_value=0.001, max_value=10.0, initial=0.5)
    gate_mode = forms.ChoiceField(choices=RubricPolicy.Mode.choices)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("baseline") and data.get("baseline") == data.get("candidate"):
            raise ValidationError("compare two different experiments")
        return data
