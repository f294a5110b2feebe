"""Isolated, resource-limited execution for agents and evaluators (see sandbox/base.py)."""

from sandbox.base import (
    CommandResult,
    Mount,
    SandboxError,
    SandboxSpec,
    SandboxUnavailable,
    Session,
    backend_info,
    open_session,
)

__all__ = [
    "CommandResult",
    "Mount",
    "SandboxError",
    "SandboxSpec",
    "SandboxUnavailable",
    "Session",
    "backend_info",
    "open_session",
]
