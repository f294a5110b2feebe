"""Forms of the research pages: launch (end to end or one stage from given inputs) and task category."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError

from benchmark.llm.check import launch_problem
from benchmark.llm.forms import model_choices, model_pick
from benchmark.models import Artifact, Task
from benchmark.research import literature
from benchmark.research.files import IMAGE_SUFFIXES, clean_relative, corpus_store
from benchmark.research.pipeline import STAGES
from benchmark.research.services import research_inputs_problem
from benchmark.research.tasks import CATEGORIES

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


class TaskChoiceField(forms.ModelChoiceField):
    """MLR tasks by title and id (`iclr2025_bi_align@a83c1a24` alone tells a reader nothing)."""

    def label_from_instance(self, obj: Task) -> str:
        return f"{obj.title} · {obj.slug}"


class LaunchForm(forms.Form):
    MODE_CHOICES = [("end2end", "End to end (all five stages)"), ("stepwise", "One stage from given inputs")]

    task = TaskChoiceField(queryset=Task.objects.none(), help_text="an MLR-Bench research task")
    backbone = forms.ChoiceField(
        choices=[], label="Backbone", help_text="an endpoint and model you may use (USD per million tokens in / out)"
    )
    backbone_name = forms.CharField(
        required=False, max_length=200, label="Backbone model name", help_text="for 'another model on ...' only"
    )
    temperature = forms.FloatField(initial=0.0, min_value=0.0, max_value=2.0)
    mode = forms.ChoiceField(choices=MODE_CHOICES, initial="end2end", widget=forms.RadioSelect)
    stage = forms.ChoiceField(choices=Artifact.Stage.choices, required=False, help_text="the stage to run (stepwise)")
    literature_provider = forms.ChoiceField(
        choices=[
            ("corpus", "Offline corpus (JSONL file; works without network)"),
            ("semantic_scholar", "Semantic Scholar API (needs the network)"),
            ("openai_search", "OpenAI search model"),
        ],
        help_text="checked with one small search before anything is launched",
    )
    literature_model = forms.ChoiceField(
        choices=[], required=False, label="Search model", help_text="for the OpenAI search provider"
    )
    corpus = forms.FileField(required=False, help_text="JSONL: one {title, abstract, url, year} per line")

    # Which fields belong to which choice: the page shows only the chosen mode's and provider's.
    SHOWN_WHEN = {
        "stage": "mode=stepwise",
        "given_idea": "mode=stepwise",
        "given_literature": "mode=stepwise",
        "given_proposal": "mode=stepwise",
        "given_experiment": "mode=stepwise",
        "given_figures": "mode=stepwise",
        "literature_model": "literature_provider=openai_search",
        "corpus": "literature_provider=corpus",
    }
    given_idea = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 5}))
    given_literature = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 5}))
    given_proposal = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 5}))
    given_experiment = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 5}), help_text="results.md of an experiment you ran"
    )
    given_figures = MultipleFileField(required=False, help_text="figures cited by the given results (PNG/JPEG)")

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        self.fields["task"].queryset = Task.objects.filter(kind=Task.Kind.MLR, is_current=True).order_by(
            "title", "slug"
        )
        self.fields["literature_provider"].initial = literature.default_provider()
        server_corpus = getattr(settings, "LITERATURE_CORPUS", "")
        if server_corpus:
            self.fields[
                "corpus"
            ].help_text += f"; without one, this server's corpus ({Path(server_corpus).name}) is used"
        groups = model_choices(user)
        self.fields["backbone"].choices = [("", "(choose an endpoint and a model)")] + groups
        if not any(value.endswith("/*") for _, options in groups for value, _ in options):
            del self.fields["backbone_name"]  # no endpoint takes other model names
        self.fields["literature_model"].choices = [("", "(none)")] + model_choices(user, other=False)
        search = literature.DEFAULT_SEARCH_MODEL.partition(":")[2]
        default = next((v for _, opts in groups for v, _ in opts if v.endswith(f"/{search}")), "")
        self.fields["literature_model"].initial = default

    def rows(self) -> list[tuple[Any, str]]:
        """(bound field, the choice it is shown for or "") in order, for the template."""
        return [(field, self.SHOWN_WHEN.get(field.name, "")) for field in self]

    def clean_backbone(self) -> tuple[Any, str]:
        try:
            return model_pick(self.user, self.cleaned_data["backbone"], self.data.get("backbone_name", ""))
        except ValidationError as exc:
            raise ValidationError(exc.messages) from None

    def clean_literature_model(self) -> tuple[Any, str] | None:
        value = self.cleaned_data.get("literature_model") or ""
        if not value:
            return None
        try:
            return model_pick(self.user, value)
        except ValidationError as exc:
            raise ValidationError(exc.messages) from None

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
            if Artifact.Stage.LITERATURE in stages and not getattr(settings, "LITERATURE_CORPUS", ""):
                self.add_error("corpus", "the offline corpus provider needs a corpus file (this server has none set)")
        if (
            data.get("literature_provider") == "openai_search"
            and not data.get("literature_model")
            and "literature_model" not in self.errors
            and Artifact.Stage.LITERATURE in self._stages(data)
        ):
            self.add_error("literature_model", "the OpenAI search provider needs a search model")
        corpus = data.get("corpus")
        if corpus is not None and corpus.size > MAX_UPLOAD_BYTES:
            self.add_error("corpus", "the corpus file is larger than 10 MB")
        return data

    @staticmethod
    def _stages(data: dict[str, Any]) -> list[str]:
        return [data["stage"]] if data.get("mode") == "stepwise" and data.get("stage") else list(STAGES)

    def literature_problem(self) -> str | None:
        """What stops the chosen literature provider now (checked before launch; None when fine or unused)."""
        data = self.cleaned_data
        if Artifact.Stage.LITERATURE not in self._stages(data):
            return None
        provider = data["literature_provider"]
        if provider == "openai_search":
            endpoint, name = data["literature_model"]
            return launch_problem(endpoint=endpoint, model=name, user=self.user)
        upload = data.get("corpus")
        if provider == "corpus" and upload is not None:
            return literature.corpus_upload_problem(upload)
        return literature.provider_problem(provider, corpus=getattr(settings, "LITERATURE_CORPUS", ""))

    def _store_corpus(self) -> str:
        upload = self.cleaned_data.get("corpus")
        if not upload:
            return (
                getattr(settings, "LITERATURE_CORPUS", "")
                if self.cleaned_data.get("literature_provider") == "corpus"
                else ""
            )
        upload.seek(0)  # the problem check read it
        return corpus_store(upload.chunks())

    def _given(self) -> dict[str, str]:
        data = self.cleaned_data
        return {stage: data.get(f"given_{stage}", "") for stage in STAGES if stage != Artifact.Stage.PAPER}

    def inputs_problem(self) -> str | None:
        """What the chosen stages lack among the given inputs (checked before the endpoint is called)."""
        return research_inputs_problem(self._stages(self.cleaned_data), self._given())

    def launch_kwargs(self) -> dict[str, Any]:
        data = self.cleaned_data
        given = self._given()
        figures: dict[str, bytes] = {}
        for upload in data.get("given_figures") or []:
            name = clean_relative(f"figures/{Path(upload.name).name}")
            if name:
                figures[name] = upload.read()
        endpoint, name = data["backbone"]
        search = data.get("literature_model")
        return {
            "task": data["task"],
            "backbone": f"{endpoint.provider}:{name}",
            "endpoint": endpoint,
            "stages": self._stages(data),
            "settings": {
                "temperature": data["temperature"],
                "literature_provider": data["literature_provider"],
                "literature_endpoint": str(search[0].code) if search else "",
                "literature_model": f"{search[0].provider}:{search[1]}" if search else "",
                "literature_corpus": self._store_corpus(),
            },
            "given": given,
            "given_files": figures,
        }
