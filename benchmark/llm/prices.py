"""List prices (USD per million tokens) of common models, as of this release: the models and prices
the default endpoints are seeded with (benchmark.llm.seed). After seeding, prices are the
endpoint's, edited by an admin; a model an endpoint lists without a price is reported as
unpriced rather than given a guessed cost."""

from __future__ import annotations

from benchmark.llm.base import Prices

KNOWN: dict[str, Prices] = {
    "anthropic:claude-opus-4-1": Prices(15.0, 75.0),
    "anthropic:claude-sonnet-4-5": Prices(3.0, 15.0),
    "anthropic:claude-sonnet-4": Prices(3.0, 15.0),
    "anthropic:claude-3-7-sonnet-latest": Prices(3.0, 15.0),
    "anthropic:claude-haiku-4-5": Prices(1.0, 5.0),
    "openai:gpt-4o": Prices(2.5, 10.0),
    "openai:gpt-4o-mini": Prices(0.15, 0.6),
    "openai:gpt-4.1": Prices(2.0, 8.0),
    "openai:gpt-4.1-mini": Prices(0.4, 1.6),
    "openai:o4-mini": Prices(1.1, 4.4),
    "openai:o3": Prices(2.0, 8.0),
}
