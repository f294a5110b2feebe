"""Views imported on their first request (issue 20: import what you use, when you use it).

Every process runs the system checks at start, and they import the URL configuration; a URL conf
that imported its view modules pulled the statistics stack (numpy), pydantic, httpx and the
research, leaderboard and judge services into every command, worker and sweeper. The URL conf
names its views through `views_of("package.views")` instead: `views.run_list` is a `LazyView` that
imports `package.views` when a request first reaches it (or when Django asks the view for an
attribute, e.g. `csrf_exempt`, which is delegated to the real view). What the view checks (its
permission helper, decorators) is the real view's, unchanged.
`tests/ops/test_import_footprint.py` resolves every lazy view, so a misspelt name fails there.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


class LazyView:
    def __init__(self, module: str, name: str) -> None:
        self._target = (module, name)
        # What Django's resolver and debug pages read, given without importing the module.
        self.__module__ = module
        self.__name__ = self.__qualname__ = name

    @property
    def view(self) -> Callable[..., Any]:
        view = self.__dict__.get("_view")
        if view is None:
            module, name = self._target
            view = self.__dict__["_view"] = getattr(import_module(module), name)
        return view

    def __call__(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        return self.view(request, *args, **kwargs)

    def __getattr__(self, attr: str) -> Any:  # only for attributes this object lacks
        if attr.startswith("__") or attr in ("_target", "_view"):
            raise AttributeError(attr)
        return getattr(self.view, attr)

    def __repr__(self) -> str:
        return f"<LazyView {'.'.join(self._target)}>"


class _Views:
    def __init__(self, module: str) -> None:
        self._module = module

    def __getattr__(self, name: str) -> LazyView:
        if name.startswith("_"):
            raise AttributeError(name)
        return LazyView(self._module, name)


def views_of(module: str) -> Any:
    """`views_of("benchmark.runs.views").run_list`: that view, imported on its first use."""
    return _Views(module)
