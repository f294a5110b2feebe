"""The leaderboard's filter form: which tasks, methods, source, run set and environment to rank.

Tasks and methods are checkbox chips (one click each, no Ctrl-click listbox); a task choice is one
column, one task slug (Referee's ports and MLGym's tasks are different columns)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db import models
from django.db.models import QuerySet

from benchmark.leaderboards.board import ENVIRONMENT_KEYS, MLGYM_RELEASE, environment_q, method_q, task_labels
from benchmark.models import Run, RunGroup


class Source(models.TextChoices):
    ALL = "all", "Referee runs and imported"
    REFEREE = Run.Source.REFEREE.value, "Referee runs only"
    MLGYM = Run.Source.MLGYM.value, "imported from MLGym only"


GROUP_BY_CHOICES = [("", "no grouping"), *((key, key.replace("_", " ")) for key in ENVIRONMENT_KEYS)]


class LeaderboardFilter(forms.Form):
    tasks = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    methods = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    source = forms.ChoiceField(choices=Source.choices, required=False)
    group = forms.ChoiceField(required=False)
    environment = forms.ChoiceField(required=False, label="Environment")
    group_by = forms.ChoiceField(choices=GROUP_BY_CHOICES, required=False, label="Rows per environment")
    research = forms.BooleanField(
        required=False, label="Include research-pipeline experiments (agents working on an MLR-Bench idea)"
    )

    def __init__(self, *args: Any, runs: QuerySet[Run], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        pairs = runs.values_list("task__slug", "method", "agent__name").distinct()
        slugs = sorted({p[0] for p in pairs})
        labels = task_labels(slugs)
        self.fields["tasks"].choices = [(s, s if labels.get(s, s) == s else f"{labels[s]} · {s}") for s in slugs]
        self.fields["methods"].choices = [(m, m) for m in sorted({p[1] or p[2] for p in pairs})]
        groups = RunGroup.objects.filter(runs__in=runs).distinct().order_by("-created_at")
        self.fields["group"].choices = [("", "any run set"), *((str(g.code), g.name) for g in groups)]
        self.fields["environment"].choices = [("", "any environment"), *self._environments(runs)]

    @staticmethod
    def _environments(runs: QuerySet[Run]) -> list[tuple[str, str]]:
        """Every "key=value" a visible Referee run recorded, and MLGym release when imported runs are there."""
        values: set[str] = set()
        for environment in runs.filter(source=Run.Source.REFEREE).values_list("environment", flat=True).distinct():
            for key in ENVIRONMENT_KEYS:
                value = (environment or {}).get(key) if isinstance(environment, dict) else None
                if value not in (None, ""):
                    values.add(f"{key}={value}")
        choices = [(v, v) for v in sorted(values)]
        if runs.filter(source=Run.Source.MLGYM).exists():
            choices.append((MLGYM_RELEASE, f"{MLGYM_RELEASE} (imported results: MLGym's own environment)"))
        return choices

    def filtered(self, runs: QuerySet[Run]) -> QuerySet[Run]:
        data = self.cleaned_data
        if data.get("source") in (Source.REFEREE, Source.MLGYM):
            runs = runs.filter(source=data["source"])
        if data.get("group"):
            runs = runs.filter(group__code=data["group"])
        if data.get("tasks"):
            runs = runs.filter(task__slug__in=data["tasks"])
        if data.get("methods"):
            runs = runs.filter(method_q(data["methods"]))
        if data.get("environment"):
            runs = runs.filter(environment_q(data["environment"]))
        return runs

    def as_filters(self) -> dict[str, Any]:
        return {k: v for k, v in self.cleaned_data.items() if v}
