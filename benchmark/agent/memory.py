"""The agent's memory: notes it writes, retrieved by BM25 (pure Python, nothing to download)."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

_TOKEN = re.compile(r"[a-z0-9_]+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


@dataclass
class Memory:
    """Notes in write order. Small (tens of notes per run): scoring all of them per query is cheap."""

    notes: list[str] = field(default_factory=list)
    k1: float = 1.5
    b: float = 0.75

    def write(self, text: str) -> int:
        self.notes.append(text.strip())
        return len(self.notes)

    def read(self, query: str, *, top: int = 3) -> list[tuple[float, str]]:
        if not self.notes:
            return []
        docs = [Counter(tokens(n)) for n in self.notes]
        lengths = [sum(d.values()) for d in docs]
        average = sum(lengths) / len(lengths) or 1.0
        df: Counter[str] = Counter()
        for doc in docs:
            df.update(doc.keys())
        n = len(docs)
        scored = []
        for position, (doc, length) in enumerate(zip(docs, lengths, strict=True)):
            score = 0.0
            for term in set(tokens(query)):
                if term not in doc:
                    continue
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                tf = doc[term]
                score += idf * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * length / average))
            if score > 0:
                scored.append((score, position))
        scored.sort(key=lambda item: (-item[0], -item[1]))
        return [(round(score, 3), self.notes[position]) for score, position in scored[:top]]
