"""Where the released MLR-Bench data lies for the tests: settings.MLRBENCH_DIR (env MLRBENCH_DIR, else ../shared)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

MLRBENCH = (
    Path(settings.MLRBENCH_DIR) if settings.MLRBENCH_DIR else Path(settings.BASE_DIR).parent / "shared" / "mlrbench"
)
needs_data = pytest.mark.shared_data(MLRBENCH / "tasks")
