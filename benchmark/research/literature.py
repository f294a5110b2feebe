"""Literature search for the research pipeline (and the agent's `literature_search` tool).

Three providers, each returning the same `Reference` rows:
- `openai_search`: an OpenAI search model (e.g. openai:gpt-4o-search-preview) asked for a JSON list;
- `semantic_scholar`: the Semantic Scholar Graph API (paper search), key optional;
- `corpus`: an offline JSONL file of {title, abstract, url, year}, ranked by TF-IDF overlap with the query.

HTTP goes through benchmark.llm.transport, so tests fake the replies at the transport like the LLMs'.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import httpx2
from django.conf import settings

from benchmark.llm import Endpoint, complete
from benchmark.llm.transport import http_client
from benchmark.research import files as artifact_files

PROVIDERS = ("openai_search", "semantic_scholar", "corpus")
S2_URL = "https://api.semanticscholar.org/graph/v1/paper/search"
DEFAULT_SEARCH_MODEL = "openai:gpt-4o-search-preview"


class LiteratureError(Exception):
    """The provider could not be asked or answered nonsense; the message says which and why."""


@dataclass
class Reference:
    title: str
    abstract: str = ""
    url: str = ""
    year: str = ""
    authors: str = ""

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class SearchResult:
    references: list[Reference]
    provider: str
    query: str
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0


def _safe_url(url: Any) -> str:
    text = str(url or "").strip()
    return text if text.startswith(("https://", "http://")) else ""


def _reference(row: dict[str, Any]) -> Reference | None:
    title = str(row.get("title") or "").strip()
    if not title:
        return None
    authors = row.get("authors") or ""
    if isinstance(authors, list):
        authors = ", ".join(str(a.get("name", a)) if isinstance(a, dict) else str(a) for a in authors)
    return Reference(
        title=title[:500],
        abstract=str(row.get("abstract") or row.get("summary") or "")[:3000],
        url=_safe_url(row.get("url")),
        year=str(row.get("year") or ""),
        authors=str(authors)[:500],
    )


# -- providers -------------------------------------------------------------------------------------
def search_semantic_scholar(query: str, *, limit: int = 10, api_key: str = "", timeout: float = 30.0) -> SearchResult:
    params = {"query": query[:300], "limit": str(limit), "fields": "title,abstract,url,year,authors"}
    headers = {"x-api-key": api_key} if api_key else {}
    try:
        with http_client(timeout) as client:
            response = client.get(S2_URL, params=params, headers=headers)
    except httpx2.HTTPError as exc:
        raise LiteratureError(f"Semantic Scholar unreachable: {exc}") from exc
    if response.status_code != 200:
        raise LiteratureError(f"Semantic Scholar answered HTTP {response.status_code}: {response.text[:300]}")
    try:
        rows = response.json().get("data") or []
    except ValueError as exc:
        raise LiteratureError(f"Semantic Scholar sent invalid JSON: {exc}") from exc
    refs = [r for r in (_reference(row) for row in rows if isinstance(row, dict)) if r is not None]
    return SearchResult(references=refs, provider="semantic_scholar", query=query)


_WORD = re.compile(r"[a-z0-9]+")


def _tokens(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if len(w) > 2]


def parse_corpus(lines: Iterable[str], name: str) -> tuple[list[Reference], list[str]]:
    """The rows of a JSONL corpus and the problems found (line numbers named); bad lines are skipped."""
    refs: list[Reference] = []
    problems: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            problems.append(f"{name} line {number}: invalid JSON ({exc.args[0]})")
            continue
        ref = _reference(row) if isinstance(row, dict) else None
        if ref is None:
            problems.append(f"{name} line {number}: no title")
            continue
        refs.append(ref)
    return refs, problems


def load_corpus(path: str | Path) -> tuple[list[Reference], list[str]]:
    """The corpus rows and the problems found (line numbers named); bad lines are skipped, not fatal."""
    if str(path).startswith(artifact_files.CORPUS_SCHEME):  # uploaded with the launch, in the shared storage
        stored = artifact_files.corpus_open(str(path))
        if stored is None:
            raise LiteratureError(f"uploaded corpus {path} not found in the artifact storage")
        with stored:
            text = stored.read().decode("utf-8", errors="replace")
        return parse_corpus(text.splitlines(), PurePosixPath(str(path)).name)
    file = Path(path)
    if not file.is_file():
        raise LiteratureError(f"corpus file {file} not found")
    with file.open(encoding="utf-8", errors="replace") as handle:
        return parse_corpus(handle, file.name)


def search_corpus(query: str, *, path: str | Path, limit: int = 10) -> SearchResult:
    refs, _ = load_corpus(path)
    docs = [Counter(_tokens(f"{r.title} {r.title} {r.abstract}")) for r in refs]
    frequency = Counter(word for doc in docs for word in doc)
    query_words = set(_tokens(query))
    scored = []
    for ref, doc in zip(refs, docs, strict=True):
        score = sum(doc[w] * math.log((1 + len(docs)) / (1 + frequency[w])) for w in query_words if w in doc)
        if score > 0:
            scored.append((score, ref))
    scored.sort(key=lambda pair: -pair[0])
    return SearchResult(references=[ref for _, ref in scored[:limit]], provider="corpus", query=query)


SEARCH_PROMPT = """Find up to {limit} published research papers most relevant to the research idea below.
Only list papers you found in your search results; never invent a paper, author or link.
Reply with a JSON array only, each item {{"title", "authors", "year", "url", "abstract"}} where
"abstract" is a two-sentence summary of the paper.

Research idea:
{query}"""


def _json_array(text: str) -> list[Any]:
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        raise LiteratureError(f"the search model did not reply with a JSON array: {text[:200]!r}")
    try:
        value = json.loads(text[start : end + 1])
    except ValueError as exc:
        raise LiteratureError(f"the search model's JSON is invalid ({exc})") from exc
    if not isinstance(value, list):
        raise LiteratureError("the search model's JSON is not an array")
    return value


def search_openai(
    query: str, *, model: str = DEFAULT_SEARCH_MODEL, limit: int = 10, endpoint: Endpoint | None = None
) -> SearchResult:
    """`model` at `endpoint`; with no endpoint, `model` reads provider:model and goes to the admin's default."""
    if endpoint is None:
        from benchmark.llm.endpoints import connection_for

        endpoint, model = connection_for(endpoint=None, model=model)
    # Search models take no temperature; the reply's own citations are what we keep.
    completion = complete(
        endpoint=endpoint,
        model=model,
        messages=[{"role": "user", "content": SEARCH_PROMPT.format(limit=limit, query=query)}],
        temperature=None,
        max_tokens=4096,
    )
    rows = _json_array(completion.text)
    refs = [r for r in (_reference(row) for row in rows if isinstance(row, dict)) if r is not None][:limit]
    return SearchResult(
        references=refs,
        provider="openai_search",
        query=query,
        tokens_in=completion.tokens_in,
        tokens_out=completion.tokens_out,
        cost=completion.cost,
    )


def default_provider() -> str:
    """The provider the launch form proposes: the deployment's choice, else Semantic Scholar when it
    has a key, else the offline corpus (the only one that works with no network and no key)."""
    chosen = getattr(settings, "LITERATURE_PROVIDER", "")
    if chosen:
        return chosen
    return "semantic_scholar" if getattr(settings, "SEMANTIC_SCHOLAR_API_KEY", "") else "corpus"


def _corpus_problem(refs: list[Reference], problems: list[str]) -> str | None:
    if refs:
        return None
    detail = "; ".join(problems[:3]) or "the file is empty"
    return f"the corpus has no usable paper (one JSON object with a title per line): {detail}"


def corpus_upload_problem(upload: Any) -> str | None:
    """An uploaded corpus checked before it is stored (the same parse the search uses)."""
    upload.seek(0)
    text = upload.read().decode("utf-8", errors="replace")
    upload.seek(0)
    return _corpus_problem(*parse_corpus(text.splitlines(), upload.name))


def provider_problem(provider: str, *, corpus: str = "") -> str | None:
    """None when the provider answers now (one small search); else what to tell the person launching.

    The OpenAI search model is checked as a model endpoint (benchmark.llm.check), not here."""
    if provider == "corpus":
        try:
            refs, problems = load_corpus(corpus) if corpus else ([], ["no corpus file"])
        except LiteratureError as exc:
            return str(exc)
        return _corpus_problem(refs, problems)
    if provider == "semantic_scholar":
        try:
            search_semantic_scholar(
                "machine learning", limit=1, api_key=getattr(settings, "SEMANTIC_SCHOLAR_API_KEY", ""), timeout=5.0
            )
        except LiteratureError as exc:
            return f"{exc}. Choose the offline corpus, or another provider, to launch from this server"
    return None


def search(
    query: str,
    *,
    provider: str,
    limit: int = 10,
    corpus: str = "",
    model: str = "",
    endpoint: Endpoint | None = None,
) -> SearchResult:
    if provider == "semantic_scholar":
        return search_semantic_scholar(query, limit=limit, api_key=getattr(settings, "SEMANTIC_SCHOLAR_API_KEY", ""))
    if provider == "corpus":
        if not corpus:
            raise LiteratureError("the corpus provider needs a corpus file (JSONL of title, abstract, url, year)")
        return search_corpus(query, path=corpus, limit=limit)
    if provider == "openai_search":
        return search_openai(query, model=model or DEFAULT_SEARCH_MODEL, limit=limit, endpoint=endpoint)
    raise LiteratureError(f"unknown literature provider {provider!r}; choose one of {', '.join(PROVIDERS)}")


def agent_tool(tool: str, argument: str) -> str:
    """The agent's literature tools, with the provider from settings (LITERATURE_PROVIDER, LITERATURE_CORPUS)."""
    if tool != "literature_search":
        return f"{tool} is not available: only literature_search is provided."
    provider = getattr(settings, "LITERATURE_PROVIDER", "")
    try:
        result = search(argument, provider=provider, corpus=getattr(settings, "LITERATURE_CORPUS", ""), limit=5)
    except Exception as exc:  # the agent reads the error and carries on
        return f"literature_search failed: {exc}"
    if not result.references:
        return "No papers found."
    return "\n\n".join(
        f"[{i}] {r.title} ({r.year}) {r.authors}\n{r.url}\n{r.abstract}" for i, r in enumerate(result.references, 1)
    )
