"""Model fields for text that comes from agents, sandboxes and imported files.

PostgreSQL refuses NUL (0x00) in text and in jsonb strings, while SQLite stores it; program
output and released trajectories do contain it. These fields store each NUL as the visible
symbol U+2400 (␀), so the same data saves on both databases and the reader sees where it was.
"""

from __future__ import annotations

from typing import Any

from django.db import models

NUL = "\x00"
NUL_SYMBOL = "\u2400"


def without_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace(NUL, NUL_SYMBOL) if NUL in value else value
    if isinstance(value, dict):
        return {without_nul(key): without_nul(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [without_nul(item) for item in value]
    return value


class OutputTextField(models.TextField):
    def get_prep_value(self, value: Any) -> Any:
        return without_nul(super().get_prep_value(value))


class OutputJSONField(models.JSONField):
    def get_prep_value(self, value: Any) -> Any:
        return super().get_prep_value(without_nul(value))
