"""Forms of the research pages: launch (end to end or one stage from given inputs) and task category."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from django import forms
from django.conf import settings

from benchmark import literature
from benchmark.llm import ConfigurationError, parse_model
from benchmark.mlr_tasks import CATEGORIES
from benchmark.models import Artifact, Task
from benchmark.research import STAGES
from benchmark.research_files import IMAGE_SUFFIXES, clean_relative

MAX_UPLOAD_BYTES = 10 * 1024 * 1024


class CategoryForm(forms.Form):
    category = forms.ChoiceField(choices=[("", "(none)")] + [(c, c) for c in CATEGORIES], required=False)


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[Any]:
        single = super().clean
        if isinstance(data, list | tuple):
            return [single(d, initial) for d in data]
        return [single(data, initial)] if data else []


class LaunchForm(forms.Form):
    MODE_CHOICES = [("end2end", "End to end (all five stages)"), ("stepwise", "One stage from given inputs")]

    task = forms.ModelChoiceField(queryset=Task.objects.none(), help_text="an MLR-Bench research task")
    backbone = forms.CharField(
        max_length=200, help_text="provider:model, e.g. anthropic:claude-sonnet-4-5, openai:gpt-4.1, compat:llama3"
    )
    base_url = forms.URLField(
        required=False, assume_scheme="https", help_text="for compat: an OpenAI-compatible server"
    )
    temperature = forms.FloatField(initial=0.0, min_value=0.0, max_value=2.0)
    mode = forms.ChoiceField(choices=MODE_CHOICES, initial="end2end", widget=forms.RadioSelect)
    stage = forms.ChoiceField(choices=Artifact.Stage.choices, required=False, help_text="the stage to run (stepwise)")
    literature_provider = forms.ChoiceField(
        choices=[
            ("semantic_scholar", "Semantic Scholar API"),
            ("openai_search", "OpenAI search model"),
            ("corpus", "Offline corpus file (JSONL)"),
        ]
    )
    literature_model = forms.CharField(required=False, max_length=200, initial=literature.DEFAULT_SEARCH_MODEL)
    corpus = forms.FileField(required=False, help_text="JSONL: one {title, abstract, url, year} per line")
    given_idea = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 5}))
    given_literature = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 5}))
    given_proposal = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 5}))
    given_experiment = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 5}), help_text="results.md of an experiment you ran"
    )
    given_figures = MultipleFileField(required=False, help_text="figures cited by the given results (PNG/JPEG)")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["task"].queryset = Task.objects.filter(kind=Task.Kind.MLR, is_current=True).order_by("slug")

    def clean_backbone(self) -> str:
        value = self.cleaned_data["backbone"].strip()
        try:
            parse_model(value)
        except ConfigurationError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return value

    def clean_given_figures(self) -> list[Any]:
        files = self.cleaned_data.get("given_figures") or []
        for upload in files:
            if Path(upload.name).suffix.lower() not in IMAGE_SUFFIXES - {".svg"}:
                raise forms.ValidationError(f"{upload.name}: only PNG, JPEG, GIF or WebP figures")
            if upload.size > MAX_UPLOAD_BYTES:
                raise forms.ValidationError(f"{upload.name}: larger than 10 MB")
        return files

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("mode") == "stepwise" and not data.get("stage"):
            self.add_error("stage", "choose the stage to run")
        if data.get("literature_provider") == "corpus" and not data.get("corpus"):
            stages = self._stages(data)
            if Artifact.Stage.LITERATURE in stages:
                self.add_error("corpus", "the offline corpus provider needs a corpus file")
        corpus = data.get("corpus")
        if corpus is not None and corpus.size > MAX_UPLOAD_BYTES:
            self.add_error("corpus", "the corpus file is larger than 10 MB")
        return data

    @staticmethod
    def _stages(data: dict[str, Any]) -> list[str]:
        return [data["stage"]] if data.get("mode") == "stepwise" and data.get("stage") else list(STAGES)

    def _store_corpus(self) -> str:
        upload = self.cleaned_data.get("corpus")
        if not upload:
            return ""
        folder = Path(settings.MEDIA_ROOT) / "corpora"
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{uuid.uuid4()}.jsonl"
        with target.open("wb") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
        return str(target)

    def launch_kwargs(self) -> dict[str, Any]:
        data = self.cleaned_data
        given = {stage: data.get(f"given_{stage}", "") for stage in STAGES if stage != Artifact.Stage.PAPER}
        figures: dict[str, bytes] = {}
        for upload in data.get("given_figures") or []:
            name = clean_relative(f"figures/{Path(upload.name).name}")
            if name:
                figures[name] = upload.read()
        return {
            "task": data["task"],
            "backbone": data["backbone"],
            "stages": self._stages(data),
            "settings": {
                "temperature": data["temperature"],
                "base_url": data.get("base_url") or "",
                "literature_provider": data["literature_provider"],
                "literature_model": data.get("literature_model") or "",
                "literature_corpus": self._store_corpus(),
            },
            "given": given,
            "given_files": figures,
        }
