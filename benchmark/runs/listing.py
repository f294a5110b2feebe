"""The runs list: its filters, sort orders and full-text search, all carried in the URL's query
string (a filtered list is a link one can bookmark or send)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import F, Q, QuerySet

from benchmark.models import Run, RunGroup
from benchmark.runs import search

PAGE_SIZE = 50

# sort key -> ORDER BY; ties broken by id so pages never repeat or skip a run.
SORTS: dict[str, tuple[str, list[Any]]] = {
    "new": ("newest first", [F("created_at").desc(), F("id").desc()]),
    "old": ("oldest first", [F("created_at").asc(), F("id").asc()]),
    "best": ("best attempt, high to low", [F("best_attempt").desc(nulls_last=True), F("id").desc()]),
    "best_low": ("best attempt, low to high", [F("best_attempt").asc(nulls_last=True), F("id").desc()]),
    "cost": ("cost, high to low", [F("cost").desc(), F("id").desc()]),
    "steps": ("most steps", [F("step_count").desc(), F("id").desc()]),
    "task": ("task", [F("task__slug").asc(), F("created_at").desc(), F("id").desc()]),
}


class RunFilterForm(forms.Form):
    """GET parameters of the list. An invalid one is reported and ignored; the valid ones still apply."""

    q = forms.CharField(required=False, max_length=200, label="Search steps")
    named = forms.CharField(required=False, max_length=200, label="Name or note")
    mine = forms.BooleanField(required=False, label="Mine only")
    task = forms.CharField(required=False, max_length=200, label="Task")
    agent = forms.CharField(required=False, max_length=200, label="Agent / model")
    status = forms.ChoiceField(required=False, choices=[("", "any status"), *Run.Status.choices])
    exit = forms.CharField(required=False, max_length=60, label="Exit status")
    source = forms.ChoiceField(required=False, choices=[("", "any source"), *Run.Source.choices])
    group = forms.UUIDField(required=False, label="Launch group")
    sort = forms.ChoiceField(required=False, choices=[(key, label) for key, (label, _) in SORTS.items()])

    def values(self) -> dict[str, Any]:
        """The valid, non-empty filters (is_valid() must have been called)."""
        return {name: value for name, value in self.cleaned_data.items() if value not in ("", None, False)}


def runs_filtered(
    runs: QuerySet[Run], filters: dict[str, Any], *, user: Any, matches: search.Matches | None = None
) -> QuerySet[Run]:
    """`matches`: the runs matching filters["q"] (search.recent_matches), when searching."""
    if filters.get("mine"):
        runs = runs.filter(owner=user)
    if "task" in filters:
        runs = runs.filter(task__slug=filters["task"])
    if "agent" in filters:
        word = filters["agent"]
        runs = runs.filter(Q(method__icontains=word) | Q(agent__name__icontains=word) | Q(agent__model__icontains=word))
    if "status" in filters:
        runs = runs.filter(status=filters["status"])
    if "exit" in filters:
        runs = runs.filter(exit_status=filters["exit"])
    if "source" in filters:
        runs = runs.filter(source=filters["source"])
    if "group" in filters:
        runs = runs.filter(group__code=filters["group"])
    if "named" in filters:
        words = filters["named"]
        runs = runs.filter(Q(group__title__icontains=words) | Q(group__note__icontains=words))
    if matches is not None:
        runs = runs.filter(pk__in=search.id_in(matches.run_ids))
    return runs.order_by(*SORTS[filters.get("sort") or "new"][1])


def filter_choices(runs: QuerySet[Run]) -> dict[str, list[Any]]:
    """What the filter menus offer: the tasks, methods and exit statuses of the runs this user sees
    (one scan of their distinct combinations, not one per menu)."""
    tasks: dict[str, str] = {}
    methods: set[str] = set()
    exits: set[str] = set()
    combos = runs.order_by().values_list("task__slug", "task__title", "method", "exit_status").distinct()
    for slug, title, method, exit_status in combos:
        tasks.setdefault(slug, title)
        methods.add(method)
        exits.add(exit_status)
    return {
        "tasks": sorted(tasks.items()),
        "methods": sorted(methods - {""}),
        "exits": sorted(exits - {""}),
    }


def group_for(filters: dict[str, Any], runs: QuerySet[Run]) -> RunGroup | None:
    """The launch group named in the filters, if this user sees any of its runs."""
    if "group" not in filters or not runs.filter(group__code=filters["group"]).exists():
        return None
    return RunGroup.objects.filter(code=filters["group"]).first()
