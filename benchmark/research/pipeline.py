"""MLR-Agent's stages on Referee: idea -> literature review -> proposal -> experiment -> paper.

Each stage is a function of a `Context` (the run's task, settings and earlier artifacts) that
returns a `StageResult`; benchmark.research.services stores each as one Artifact row and walks
a run's stages in order.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from benchmark.llm import ConfigurationError, Endpoint, LLMError, complete, image_block, text_block
from benchmark.llm.endpoints import connection_for
from benchmark.models import Artifact, ModelEndpoint, ResearchRun, Task
from benchmark.research import literature
from benchmark.research.experiment import ExperimentRequest, ExperimentUnavailable, experiment_agent
from benchmark.research.files import clean_relative, is_image, read_bytes, stored_size

log = logging.getLogger(__name__)

STAGES = [s.value for s in Artifact.Stage]
IDEA_MAX_WORDS = 200
MAX_FIGURES_TO_MODEL = 8
MAX_FIGURE_BYTES = 4 * 1024 * 1024


class StageError(Exception):
    """A stage could not produce its output; the message is shown on the run page.

    `partial` is what the stage did leave behind (the experiment agent's run, its logs), kept on
    the failed artifact so the page can link to the trajectory that explains the failure."""

    def __init__(self, message: str, *, partial: StageResult | None = None) -> None:
        super().__init__(message)
        self.partial = partial


@dataclass
class StageResult:
    content: str
    data: dict[str, Any] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    tokens_sent: int = 0
    tokens_received: int = 0
    cost: float = 0.0
    experiment_run: Any = None


@dataclass
class Context:
    run: ResearchRun
    artifacts: dict[str, Artifact]
    _connection: tuple[Endpoint, str] | None = None

    @property
    def task(self) -> Task:
        return self.run.task

    def text(self, stage: str) -> str:
        artifact = self.artifacts.get(stage)
        if artifact is None or artifact.status != Artifact.Status.DONE:
            raise StageError(f"the {stage} stage has no output to build on; run it first or give it as input")
        return artifact.content

    @property
    def model(self) -> str:
        return self.run.backbone

    def connection(self) -> tuple[Endpoint, str]:
        """The backbone's endpoint as the run's owner may call it (checked again on every resume)."""
        if self._connection is None:
            try:
                self._connection = connection_for(endpoint=self.run.endpoint, model=self.model, user=self.run.owner)
            except ConfigurationError as exc:
                raise StageError(f"the backbone's endpoint cannot be used: {exc}") from None
        return self._connection

    def literature_connection(self) -> tuple[Endpoint, str]:
        """The search model's endpoint (stored as its code at launch); legacy runs name provider:model."""
        settings = self.run.settings
        code = settings.get("literature_endpoint") or ""
        endpoint = ModelEndpoint.objects.filter(code=code).first() if code else None
        if code and endpoint is None:
            raise StageError("the search model's endpoint no longer exists; launch the stage again with another")
        model = settings.get("literature_model") or literature.DEFAULT_SEARCH_MODEL
        try:
            return connection_for(endpoint=endpoint, model=model, user=self.run.owner)
        except ConfigurationError as exc:
            raise StageError(f"the search model's endpoint cannot be used: {exc}") from None

    def llm(self, *, system: str, content: Any, max_tokens: int = 8192) -> tuple[str, StageResult]:
        """One model call at the run's temperature; its usage is returned as an empty StageResult to fill."""
        endpoint, name = self.connection()
        try:
            completion = complete(
                endpoint=endpoint,
                model=name,
                system=system,
                messages=[{"role": "user", "content": content}],
                temperature=float(self.run.settings.get("temperature", 0.0)),
                max_tokens=max_tokens,
            )
        except LLMError as exc:
            raise StageError(f"the model call failed: {type(exc).__name__}: {exc}") from exc
        result = StageResult(
            content="",
            tokens_sent=completion.tokens_in,
            tokens_received=completion.tokens_out,
            cost=completion.cost,
            data={"model": completion.model, "priced": completion.priced, "stop_reason": completion.stop_reason},
        )
        return completion.text, result


# -- stages -------------------------------------------------------------------------------------
SYSTEM = "You are an ML researcher preparing a submission to the workshop whose call for papers is given."

IDEA_PROMPT = """Call for papers (workshop {venue} {year}):

{task}

Propose one new research idea for this workshop, in at most {limit} words, in markdown with exactly
these parts:
# <title>
## Motivation
## Main Idea
The idea must be specific, testable with a modest compute budget, and new."""


def _word_count(text: str) -> int:
    return len(re.findall(r"\S+", text))


def stage_idea(ctx: Context) -> StageResult:
    prompt = IDEA_PROMPT.format(
        venue=ctx.task.venue, year=ctx.task.year, task=ctx.task.description, limit=IDEA_MAX_WORDS
    )
    text, result = ctx.llm(system=SYSTEM, content=prompt, max_tokens=1024)
    words = _word_count(text)
    if words > IDEA_MAX_WORDS:
        # One request to shorten: the limit is part of the task, not a suggestion.
        shorter, again = ctx.llm(
            system=SYSTEM,
            content=f"{prompt}\n\nYour draft had {words} words; rewrite it in at most {IDEA_MAX_WORDS} words:\n\n{text}",
            max_tokens=1024,
        )
        _add_usage(result, again)
        text, words = shorter, _word_count(shorter)
    missing = [part for part in ("motivation", "main idea") if part not in text.lower()]
    if not text.strip().startswith("#"):
        missing.insert(0, "title")
    result.content = text.strip()
    result.data.update({"words": words, "over_limit": words > IDEA_MAX_WORDS, "missing_parts": missing})
    return result


LIT_PROMPT = """Research idea:

{idea}

Papers found by a literature search ({provider}):

{papers}

Write a literature review for this idea in markdown: group the papers by theme, say what each
contributes, and close with the key open challenges the idea addresses. Cite papers as [n] using
the numbers above; cite nothing that is not in the list."""


def _idea_query(idea: str) -> str:
    for line in idea.splitlines():
        if line.strip().startswith("#"):
            return line.strip("# ").strip()
    return idea[:200]


def stage_literature(ctx: Context) -> StageResult:
    idea = ctx.text(Artifact.Stage.IDEA)
    settings = ctx.run.settings
    provider = settings.get("literature_provider", "semantic_scholar")
    endpoint, model = ctx.literature_connection() if provider == "openai_search" else (None, "")
    try:
        found = literature.search(
            _idea_query(idea),
            provider=provider,
            corpus=settings.get("literature_corpus", ""),
            model=model,
            endpoint=endpoint,
            limit=int(settings.get("literature_limit", 10)),
        )
    except literature.LiteratureError as exc:
        raise StageError(f"literature search ({provider}) failed: {exc}") from exc
    except LLMError as exc:
        raise StageError(f"literature search ({provider}) failed: {type(exc).__name__}: {exc}") from exc
    if not found.references:
        raise StageError(f"literature search ({provider}) found no papers for {found.query!r}")
    papers = "\n\n".join(
        f"[{i}] {r.title} ({r.year}) {r.authors}\n{r.abstract}" for i, r in enumerate(found.references, 1)
    )
    text, result = ctx.llm(system=SYSTEM, content=LIT_PROMPT.format(idea=idea, provider=provider, papers=papers))
    result.tokens_sent += found.tokens_in
    result.tokens_received += found.tokens_out
    result.cost += found.cost
    refs_md = "\n".join(
        f"{i}. [{r.title}]({r.url})" + (f" ({r.year})" if r.year else "") if r.url else f"{i}. {r.title} ({r.year})"
        for i, r in enumerate(found.references, 1)
    )
    result.content = f"{text.strip()}\n\n## References\n\n{refs_md}\n"
    result.data.update(
        {"provider": provider, "query": found.query, "references": [r.as_dict() for r in found.references]}
    )
    return result


PROPOSAL_PROMPT = """Call for papers:

{task}

Research idea:

{idea}

Literature review:

{literature}

Write the full research proposal for this idea, about 2,000 words, in markdown: Title, Introduction
(background, objectives, significance), Methodology (data, algorithm with its equations in LaTeX -
inline $...$ and display $$...$$ -, experimental design including the baselines to compare and the
evaluation metrics), Expected Outcomes & Impact. Cite the literature above where it is used."""


def stage_proposal(ctx: Context) -> StageResult:
    prompt = PROPOSAL_PROMPT.format(
        task=ctx.task.description, idea=ctx.text(Artifact.Stage.IDEA), literature=ctx.text(Artifact.Stage.LITERATURE)
    )
    text, result = ctx.llm(system=SYSTEM, content=prompt, max_tokens=8192)
    result.content = text.strip()
    result.data["words"] = _word_count(text)
    return result


def stage_experiment(ctx: Context) -> StageResult:
    inputs = {
        "task.md": ctx.task.description,
        "idea.md": ctx.text(Artifact.Stage.IDEA),
        "related_work.md": ctx.text(Artifact.Stage.LITERATURE),
        "proposal.md": ctx.text(Artifact.Stage.PROPOSAL),
    }
    try:
        agent = experiment_agent()
        outcome = agent(
            ExperimentRequest(research_run=ctx.run, inputs=inputs, limits=ctx.run.settings.get("experiment", {}))
        )
    except ExperimentUnavailable as exc:
        raise StageError(str(exc)) from exc
    figures = sorted(p for p in outcome.files if is_image(p))
    result = StageResult(
        content=outcome.results_md,
        files={"results.md": outcome.results_md.encode(), **outcome.files} if outcome.results_md else outcome.files,
        data={
            "trace": outcome.trace,
            "figures": figures,
            "logs": sorted(p for p in outcome.files if PurePosixPath(p).name.startswith("log") or p.endswith(".log")),
            "agent_run": str(outcome.run.code) if outcome.run else "",
        },
        tokens_sent=outcome.tokens_sent,
        tokens_received=outcome.tokens_received,
        cost=outcome.cost,
        experiment_run=outcome.run,
    )
    if outcome.error:
        raise StageError(f"the experiment agent failed: {outcome.error}", partial=result)
    if not outcome.results_md.strip():
        raise StageError("the experiment agent finished without writing results.md", partial=result)
    return result


PAPER_PROMPT = """Call for papers:

{task}

Research idea:

{idea}

Literature review:

{literature}

Proposal:

{proposal}

Experimental results (results.md written by the experiment agent):

{results}

Available figures (shown to you as images below, in this order): {figure_list}

Write the workshop paper in markdown: Title, Abstract, Introduction, Related Work, Methodology,
Experiment Setup, Experiment Results (tables and figures), Analysis, Conclusion, References.
Use LaTeX for math ($...$ inline, $$...$$ display). Embed figures with ![caption](path) using
exactly the paths listed above. Report only the results given here; never invent numbers."""


def _figures_of(ctx: Context) -> list[tuple[str, bytes]]:
    experiment = ctx.artifacts.get(Artifact.Stage.EXPERIMENT)
    if experiment is None:
        return []
    found = []
    for relative in experiment.files or []:
        if not is_image(relative):
            continue
        size = stored_size(experiment.code, relative)
        data = read_bytes(experiment.code, relative) if size is not None and size <= MAX_FIGURE_BYTES else None
        if data is not None:
            found.append((relative, data))
    return found


_MEDIA = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}
_IMAGE_REF = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def stage_paper(ctx: Context) -> StageResult:
    figures = _figures_of(ctx)
    shown = [(p, data) for p, data in figures if PurePosixPath(p).suffix.lower() in _MEDIA][:MAX_FIGURES_TO_MODEL]
    prompt = PAPER_PROMPT.format(
        task=ctx.task.description,
        idea=ctx.text(Artifact.Stage.IDEA),
        literature=ctx.text(Artifact.Stage.LITERATURE),
        proposal=ctx.text(Artifact.Stage.PROPOSAL),
        results=ctx.text(Artifact.Stage.EXPERIMENT),
        figure_list=", ".join(p for p, _ in shown) or "(none)",
    )
    content: list[dict[str, str]] = [text_block(prompt)]
    for path, data in shown:
        content.append(text_block(f"Figure file: {path}"))
        content.append(image_block(data, _MEDIA[PurePosixPath(path).suffix.lower()]))
    text, result = ctx.llm(system=SYSTEM, content=content, max_tokens=12000)
    available = {p: data for p, data in figures}
    cited = list(dict.fromkeys(_IMAGE_REF.findall(text)))
    missing = [ref for ref in cited if clean_relative(ref) not in available]
    result.content = text.strip()
    result.files = {
        clean_relative(ref): available[clean_relative(ref)] for ref in cited if clean_relative(ref) in available
    }  # type: ignore[index]
    result.data.update(
        {
            "figures_shown": [p for p, _ in shown],
            "figures": sorted(result.files),
            "figure_map": {ref: clean_relative(ref) for ref in cited if ref not in missing},
            "missing_figures": missing,
            "words": _word_count(text),
        }
    )
    return result


STAGE_FUNCTIONS: dict[str, Callable[[Context], StageResult]] = {
    Artifact.Stage.IDEA: stage_idea,
    Artifact.Stage.LITERATURE: stage_literature,
    Artifact.Stage.PROPOSAL: stage_proposal,
    Artifact.Stage.EXPERIMENT: stage_experiment,
    Artifact.Stage.PAPER: stage_paper,
}


def _add_usage(into: StageResult, other: StageResult) -> None:
    into.tokens_sent += other.tokens_sent
    into.tokens_received += other.tokens_received
    into.cost += other.cost
