"""The leaderboard's filter form: which tasks, methods, source and run set to rank.

Tasks and methods are checkbox chips (one click each, no Ctrl-click listbox); a task choice is a
leaderboard column, which may stand for several task slugs (`task_names`)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db import models
from django.db.models import QuerySet

from benchmark.leaderboards.board import method_q
from benchmark.leaderboards.task_names import column_slugs, task_column
from benchmark.models import Run, RunGroup


class Source(models.TextChoices):
    ALL = "all", "Referee runs and imported"
    REFEREE = Run.Source.REFEREE.value, "Referee runs only"
    MLGYM = Run.Source.MLGYM.value, "imported from MLGym only"


class LeaderboardFilter(forms.Form):
    tasks = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    methods = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    source = forms.ChoiceField(choices=Source.choices, required=False)
    group = forms.ChoiceField(required=False)
    research = forms.BooleanField(
        required=False, label="Include research-pipeline experiments (agents working on an MLR-Bench idea)"
    )

    def __init__(self, *args: Any, runs: QuerySet[Run], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        pairs = runs.values_list("task__slug", "method", "agent__name").distinct()
        self.fields["tasks"].choices = [(t, t) for t in sorted({task_column(p[0]) for p in pairs})]
        self.fields["methods"].choices = [(m, m) for m in sorted({p[1] or p[2] for p in pairs})]
        groups = RunGroup.objects.filter(runs__in=runs).distinct().order_by("-created_at")
        self.fields["group"].choices = [("", "any run set"), *((str(g.code), g.name) for g in groups)]

    def filtered(self, runs: QuerySet[Run]) -> QuerySet[Run]:
        data = self.cleaned_data
        if data.get("source") in (Source.REFEREE, Source.MLGYM):
            runs = runs.filter(source=data["source"])
        if data.get("group"):
            runs = runs.filter(group__code=data["group"])
        if data.get("tasks"):
            runs = runs.filter(task__slug__in=column_slugs(data["tasks"]))
        if data.get("methods"):
            runs = runs.filter(method_q(data["methods"]))
        return runs

    def as_filters(self) -> dict[str, Any]:
        return {k: v for k, v in self.cleaned_data.items() if v}
