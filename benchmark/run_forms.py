"""The launch form: tasks, agent (model or baseline), number of runs, limits."""

from __future__ import annotations

import re
from typing import Any

from django import forms

from benchmark.models import STARTER_CODE, AgentConfig, Task

MODEL_RE = re.compile(r"^(anthropic|openai|compat):[\w.\-/:@]+$")


def launchable_tasks() -> Any:
    """Current MLGym-style tasks whose data is on this machine (MLR tasks run in the research pipeline)."""
    return Task.objects.filter(is_current=True, kind=Task.Kind.MLGYM).exclude(data_status=Task.DataStatus.MISSING)


class LaunchForm(forms.Form):
    tasks = forms.ModelMultipleChoiceField(queryset=Task.objects.none(), widget=forms.CheckboxSelectMultiple)
    agent_kind = forms.ChoiceField(
        choices=[(AgentConfig.Kind.BASELINE, "baseline (no model)"), (AgentConfig.Kind.MODEL, "LLM agent")],
        initial=AgentConfig.Kind.BASELINE,
    )
    model = forms.CharField(
        required=False, help_text="anthropic:<model>, openai:<model> or compat:<model> (OpenAI-compatible server)"
    )
    base_url = forms.URLField(
        required=False, assume_scheme="https", help_text="for an OpenAI-compatible server (vLLM, Ollama, llama.cpp)"
    )
    temperature = forms.FloatField(min_value=0, max_value=2, initial=0.0)
    top_p = forms.FloatField(min_value=0, max_value=1, initial=0.95)
    price_input_per_mtok = forms.FloatField(min_value=0, initial=0.0, label="USD per million input tokens")
    price_output_per_mtok = forms.FloatField(min_value=0, initial=0.0, label="USD per million output tokens")
    history_window = forms.IntegerField(min_value=1, max_value=100, initial=5, label="observations kept in full")
    n_runs = forms.IntegerField(min_value=1, max_value=20, initial=1, label="runs per task")
    max_steps = forms.IntegerField(min_value=1, max_value=1000, initial=50)
    cost_limit = forms.FloatField(min_value=0, max_value=1000, initial=4.0, label="cost limit (USD per run)")
    command_timeout = forms.IntegerField(min_value=5, max_value=6 * 3600, initial=1800, label="command timeout (s)")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["tasks"].queryset = launchable_tasks()
        self.fields["tasks"].label_from_instance = lambda task: f"{task.title} ({task.slug})"

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("agent_kind") == AgentConfig.Kind.MODEL:
            model = (data.get("model") or "").strip()
            if not MODEL_RE.match(model):
                self.add_error("model", "write provider:model, e.g. anthropic:claude-sonnet-4-5 or openai:gpt-4o")
            elif model.startswith("compat:") and not data.get("base_url"):
                self.add_error("base_url", "an OpenAI-compatible model needs the server's base URL")
        return data

    def agent_config(self, *, user: Any) -> AgentConfig:
        data = self.cleaned_data
        if data["agent_kind"] == AgentConfig.Kind.BASELINE:
            return AgentConfig.objects.create(
                name=STARTER_CODE, kind=AgentConfig.Kind.BASELINE, max_steps=data["max_steps"], created_by=user
            )
        return AgentConfig.objects.create(
            name=data["model"],
            kind=AgentConfig.Kind.MODEL,
            model=data["model"],
            base_url=data.get("base_url") or "",
            temperature=data["temperature"],
            top_p=data["top_p"],
            max_steps=data["max_steps"],
            cost_limit=data["cost_limit"],
            history_window=data["history_window"],
            price_input_per_mtok=data["price_input_per_mtok"],
            price_output_per_mtok=data["price_output_per_mtok"],
            created_by=user,
        )


class ShareForm(forms.Form):
    username = forms.CharField(max_length=150)
