"""The control room sits below the campaign pages, which show it: review.campaigns imports
review.control (campaign_open, control_context, member_invitation_resend), so nothing in
review.control may import review.campaigns, or the two packages import each other again."""

from __future__ import annotations

import ast
from pathlib import Path

import review.control

CONTROL = Path(review.control.__file__).resolve().parent


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_it_never_imports_the_campaigns_package() -> None:
    files = sorted(CONTROL.glob("*.py"))
    assert len(files) >= 4  # services, views, notices, reports: the scan reads the real package
    upward = {
        f"{path.name}: {name}"
        for path in files
        for name in imported_modules(path)
        if name == "review.campaigns" or name.startswith("review.campaigns.")
    }
    assert upward == set()


def test_it_sees_an_import_of_the_campaigns_package(tmp_path: Path) -> None:
    # The scan itself: a module that imports campaigns, either way, is found.
    module = tmp_path / "module.py"
    module.write_text("from review.campaigns.setup import campaign_grow\nimport review.campaigns.views\n")
    assert {"review.campaigns.setup", "review.campaigns.views"} <= imported_modules(module)
