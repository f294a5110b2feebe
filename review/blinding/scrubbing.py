"""The names that must not reach a reviewer: every spelling of the systems behind a campaign's items
(backbone label, provider, model, family), and scrubbing them from a text.

Names inside identifiers go too: at CamelCase humps and snake_case parts, with a version glued on
(AnthropicClient, OpenAIHypothesisGenerator, claude_client, gpt4o_results). The lowest module of
review.blinding: the tells check and the render both build on it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from benchmark.models import Artifact

SCRUBBED = "[system]"
TEXT_EXTENSIONS = {".py", ".md", ".txt", ".json", ".yaml", ".yml", ".sh", ".cfg", ".toml", ".csv", ".log", ".ipynb"}
# Model families: a backbone "claude-3-7-sonnet" also scrubs the bare "Claude", "anthropic" and so on.
FAMILIES = {
    "claude": ("claude", "anthropic", "sonnet", "opus", "haiku"),
    "gemini": ("gemini", "bard"),
    "gpt": ("gpt", "openai", "chatgpt"),
    "o1": ("openai",),
    "o3": ("openai",),
    "o4": ("openai",),
    "llama": ("llama", "meta-llama"),
    "qwen": ("qwen",),
    "deepseek": ("deepseek",),
    "mistral": ("mistral", "mixtral"),
}


def system_names(*labels: str) -> list[str]:
    """Every spelling of the systems behind an item that must not be shown: longest first."""
    names: set[str] = set()
    for label in labels:
        label = (label or "").strip()
        if not label:
            continue
        names.add(label)
        if ":" in label:
            provider, _, model = label.partition(":")
            names.update({provider, model})
        for name in list(names):
            head = re.split(r"[-_.:/ ]", name.lower(), maxsplit=1)[0]
            names.update(FAMILIES.get(head, ()))
    return sorted((n for n in names if len(n) >= 2), key=len, reverse=True)


# Where a name may start: not inside another word, but after an escape such as "\\n" in JSON
# traces ("\\nclaude_code/"), or at a CamelCase hump inside an identifier (myClaude, LLMClaude).
_START = (
    r"(?:(?<![A-Za-z0-9])"
    r"|(?<=\\[ntr])"
    r"|(?<=[a-z0-9])(?=[A-Z])"
    r"|(?<=[A-Z])(?=[A-Z][a-z]))"
)
# Then a version glued to it (gpt4o, claude3), any separated suffix (claude-3-7-sonnet, claude_client,
# gemini-2.5-pro, claude-3.7), and the end of the word, a CamelCase hump or the next capital
# (AnthropicClient, OpenAIHypothesisGenerator, OpenAILLM).
_TAIL = (
    r"(?:[0-9]+(?:\.[0-9]+)*[A-Za-z]?)?"
    r"(?:[-_][A-Za-z0-9]+|\.[0-9][A-Za-z0-9]*)*"  # a dot only before a version: client.send stays
    r"(?:(?![A-Za-z0-9])"
    r"|(?<=[a-z0-9])(?=[A-Z])"
    r"|(?<=[A-Z])(?=[A-Z]))"  # OpenAIHypothesis, OpenAILLM, GEMINIAPI
)


@lru_cache(maxsize=256)
def name_pattern(names: tuple[str, ...]) -> re.Pattern[str] | None:
    if not names:
        return None
    alternatives = "|".join(re.escape(n) for n in names)
    # Most positions fail on their first character: test it before the boundary alternatives.
    first = "".join(sorted({re.escape(c) for n in names for c in (n[0].lower(), n[0].upper())}))
    # Case-insensitive for the names only: the hump tests around them must see the real case.
    return re.compile(rf"(?=[{first}]){_START}(?i:{alternatives}){_TAIL}")


def scrub(text: str, names: list[str] | tuple[str, ...]) -> str:
    pattern = name_pattern(tuple(names))
    return pattern.sub(SCRUBBED, text) if pattern else text


def artifact_labels(artifact: Artifact) -> list[str]:
    """Raw labels of everything that produced an artifact: backbone, models in the run settings,
    the experiment's coding agent (e.g. "Claude Code" in the released runs), the agent config."""
    run = artifact.research_run
    labels = [run.backbone]
    for key, value in (run.settings or {}).items():
        if "model" in key.lower() and isinstance(value, str):
            labels.append(value)
    experiment = Artifact.objects.filter(research_run_id=run.pk, stage=Artifact.Stage.EXPERIMENT).only("data").first()
    if experiment and isinstance((experiment.data or {}).get("agent"), str):
        labels.append(experiment.data["agent"])
    if artifact.experiment_run_id:
        agent = artifact.experiment_run.agent
        labels += [agent.model, agent.name, artifact.experiment_run.method]
    return [label for label in labels if label]


def run_labels(run: Any) -> list[str]:
    """Raw labels of what made an agent run (a trajectory item): its agent config, model, method,
    endpoint, and the model named in imported metadata."""
    agent = run.agent
    labels = [agent.name, agent.model, run.method, str((agent.extra or {}).get("agent_config") or "")]
    if agent.endpoint_id:
        labels.append(agent.endpoint.name)
    imported = (run.params or {}).get("import") or {}
    if isinstance(imported, dict) and isinstance(imported.get("model"), str):
        labels.append(imported["model"])
    folder = (run.params or {}).get("mlgym_folder")
    if isinstance(folder, str) and folder:
        # MLGym's method field ("metagen-claude-35-sonnet-new") and its agent prefix ("metagen").
        method = folder.split("__")[0]
        labels += [method, method.split("-")[0]]
    return [label for label in labels if label]


def item_system_names(item) -> list[str]:  # item: review.models.CampaignItem
    """Every name scrubbed from an item: those of every system in its campaign, not only its own.

    Scrubbing only the item's own system would itself be a tell: a fixed sentence that names
    several models ("GPT-4o-mini, o4-mini or Claude") would lose a different word in each system's items.
    """
    names = set(item.campaign.blind_names or [])
    if not names:  # a campaign from before blind_names, or one still being built
        labels = run_labels(item.run) if item.run_id else artifact_labels(item.artifact)
        names = set(system_names(*labels))
    return sorted(names, key=lambda n: (-len(n), n))
