"""The launch form: tasks, agent (model or baseline), number of runs, limits."""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from benchmark.llm.forms import ModelField, model_choices, model_pick, unready_note
from benchmark.models import STARTER_CODE, AgentConfig, Task
from benchmark.runs.gpus import live_gpu_workers
from benchmark.tasks.resources import task_gpus


def launchable_tasks() -> Any:
    """Current MLGym-style tasks whose data is on this machine (MLR tasks run in the research pipeline)."""
    # runnable: an MLGym task may have all its files and still be of a kind Referee does not evaluate.
    return Task.objects.filter(is_current=True, kind=Task.Kind.MLGYM, config__runnable=True).exclude(
        data_status=Task.DataStatus.MISSING
    )


def launch_blockers(codes: list[str]) -> list[tuple[Task, str]]:
    """The tasks a "launch on this task" link names that cannot be launched, each with why (what data is
    missing and where it goes, or why Referee does not run it), for the launch page to say."""
    try:
        asked = list(Task.objects.filter(code__in=codes).exclude(pk__in=launchable_tasks()).order_by("slug")[:20])
    except ValidationError:  # not a UUID
        return []
    blockers = []
    for task in asked:
        if not task.is_current:
            why = "a superseded version of this task"
        elif task.data_status == Task.DataStatus.MISSING:
            why = task.data_detail or "its data is missing on this machine"
        else:
            why = task.config.get("not_runnable_reason") or "Referee does not run this task here"
        blockers.append((task, why))
    return blockers


class LaunchForm(forms.Form):
    tasks = forms.ModelMultipleChoiceField(queryset=Task.objects.none(), widget=forms.CheckboxSelectMultiple)
    agent_kind = forms.ChoiceField(
        choices=[(AgentConfig.Kind.BASELINE, "baseline (no model)"), (AgentConfig.Kind.MODEL, "LLM agent")],
        initial=AgentConfig.Kind.BASELINE,
    )
    model = ModelField(
        required=False,
        choices=[],
        label="Endpoint and model",
        help_text="the model endpoints you may use, with their prices (USD per million tokens in / out)",
    )
    model_name = forms.CharField(
        required=False, max_length=200, label="Model name", help_text="for 'another model on ...' only"
    )
    temperature = forms.FloatField(min_value=0, max_value=2, initial=0.0)
    top_p = forms.FloatField(min_value=0, max_value=1, initial=0.95)
    history_window = forms.IntegerField(min_value=1, max_value=100, initial=5, label="observations kept in full")
    n_runs = forms.IntegerField(min_value=1, max_value=20, initial=1, label="runs per task")
    max_steps = forms.IntegerField(min_value=1, max_value=1000, initial=50)
    cost_limit = forms.FloatField(min_value=0, max_value=1000, initial=4.0, label="cost limit (USD per run)")
    command_timeout = forms.IntegerField(
        min_value=5,
        max_value=6 * 3600,
        required=False,
        label="command timeout (s)",
        help_text="blank: the task's own (MLGym's training_timeout), else 1800",
    )
    title = forms.CharField(
        required=False, max_length=200, label="Name (optional)", help_text="e.g. 'sonnet, longer history'"
    )
    note = forms.CharField(
        required=False,
        max_length=2000,
        label="Note (optional)",
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="what this launch tries; searchable in the runs list",
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        self.fields["tasks"].queryset = launchable_tasks()
        self.fields["tasks"].label_from_instance = self.task_label
        self._gpu_workers: int | None = None
        choices = model_choices(user)
        self.fields["model"].choices = [("", "(choose an endpoint and a model)")] + choices
        if note := unready_note(user):
            self.fields["model"].help_text = f"{self.fields['model'].help_text}. {note}"
        if not any(value.endswith("/*") for _, options in choices for value, _ in options):
            del self.fields["model_name"]  # no endpoint takes other model names

    def task_label(self, task: Task) -> str:
        """The task's name and, for a GPU task, where it can run now (benchmark.runs.gpus)."""
        label = f"{task.title} ({task.slug})"
        needed = task_gpus(task)
        if not needed:
            return label
        if self._gpu_workers is None:
            try:
                self._gpu_workers = live_gpu_workers()
            except Exception:  # Redis away: the launch itself says so
                self._gpu_workers = 0
        where = (
            f"the GPU pool: {self._gpu_workers} GPU worker(s) live"
            if self._gpu_workers
            else "no GPU worker is live, so it cannot be launched now"
        )
        return f"{label}: needs {needed} GPU; {where}"

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("agent_kind") == AgentConfig.Kind.MODEL:
            try:
                data["endpoint"], data["model_name"] = model_pick(self.user, data.get("model"), data.get("model_name"))
            except ValidationError as exc:
                self.add_error("model", exc)
        return data

    def agent_config(self, *, user: Any) -> AgentConfig:
        data = self.cleaned_data
        if data["agent_kind"] == AgentConfig.Kind.BASELINE:
            return AgentConfig.objects.create(
                name=STARTER_CODE, kind=AgentConfig.Kind.BASELINE, max_steps=data["max_steps"], created_by=user
            )
        endpoint = data["endpoint"]
        model = f"{endpoint.provider}:{data['model_name']}"
        # Prices are the endpoint's (an admin's), read at call time; a launch cannot set its own.
        return AgentConfig.objects.create(
            name=model,
            kind=AgentConfig.Kind.MODEL,
            model=model,
            endpoint=endpoint,
            temperature=data["temperature"],
            top_p=data["top_p"],
            max_steps=data["max_steps"],
            cost_limit=data["cost_limit"],
            history_window=data["history_window"],
            created_by=user,
        )


class ShareForm(forms.Form):
    username = forms.CharField(max_length=150)


NOTE_MAX_CHARS = 4000
NOTE_MAX_TAGS = 8


class StepNoteForm(forms.Form):
    body = forms.CharField(max_length=NOTE_MAX_CHARS, strip=True)
    tags = forms.CharField(required=False, max_length=200, help_text="comma separated")

    def clean_tags(self) -> list[str]:
        tags: list[str] = []
        for raw in self.cleaned_data["tags"].split(","):
            tag = raw.strip().lower()
            if not tag:
                continue
            if not re.fullmatch(r"[\w-]{1,30}", tag):
                raise ValidationError(f"“{raw.strip()}”: a tag is 1-30 letters, digits, - or _.")
            if tag not in tags:
                tags.append(tag)
        if len(tags) > NOTE_MAX_TAGS:
            raise ValidationError(f"At most {NOTE_MAX_TAGS} tags.")
        return tags


class ForkForm(forms.Form):
    """Fork a run from one of its steps: the step, and the agent (endpoint and model) that goes on."""

    step = forms.IntegerField(min_value=1, label="Fork after step")
    model = ModelField(
        choices=[],
        label="Endpoint and model",
        help_text="the agent that goes on after the replayed steps (prices in USD per million tokens in / out)",
    )
    model_name = forms.CharField(
        required=False, max_length=200, label="Model name", help_text="for 'another model on ...' only"
    )
    temperature = forms.FloatField(min_value=0, max_value=2, initial=0.0)
    top_p = forms.FloatField(min_value=0, max_value=1, initial=0.95)
    history_window = forms.IntegerField(min_value=1, max_value=100, initial=5, label="observations kept in full")
    max_steps = forms.IntegerField(
        min_value=2, max_value=1000, initial=50, help_text="counting the replayed steps, as a resumed run does"
    )
    cost_limit = forms.FloatField(
        min_value=0, max_value=1000, initial=4.0, label="cost limit (USD)", help_text="for the fork's own calls"
    )
    title = forms.CharField(required=False, max_length=200, label="Name (optional)")
    note = forms.CharField(
        required=False, max_length=2000, label="Note (optional)", widget=forms.Textarea(attrs={"rows": 2})
    )

    def __init__(self, *args: Any, user: Any, run: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        self.run = run
        choices = model_choices(user)
        self.fields["model"].choices = [("", "(choose an endpoint and a model)")] + choices
        if note := unready_note(user):
            self.fields["model"].help_text = f"{self.fields['model'].help_text}. {note}"
        if not any(value.endswith("/*") for _, options in choices for value, _ in options):
            del self.fields["model_name"]

    def clean_step(self) -> int:
        from benchmark.runs.forks import fork_refusal

        step = self.cleaned_data["step"]
        refusal = fork_refusal(self.run, step)
        if refusal:
            raise ValidationError(refusal)
        return step

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        step, max_steps = data.get("step"), data.get("max_steps")
        if step is not None and max_steps is not None and max_steps <= step:
            self.add_error("max_steps", f"Leave the agent at least one step after step {step}: more than {step}.")
        if data.get("model"):
            try:
                data["endpoint"], data["model_name"] = model_pick(self.user, data.get("model"), data.get("model_name"))
            except ValidationError as exc:
                self.add_error("model", exc)
        return data

    def agent_config(self, *, user: Any) -> AgentConfig:
        data = self.cleaned_data
        endpoint = data["endpoint"]
        model = f"{endpoint.provider}:{data['model_name']}"
        return AgentConfig.objects.create(
            name=model,
            kind=AgentConfig.Kind.MODEL,
            model=model,
            endpoint=endpoint,
            temperature=data["temperature"],
            top_p=data["top_p"],
            max_steps=data["max_steps"],
            cost_limit=data["cost_limit"],
            history_window=data["history_window"],
            created_by=user,
        )
