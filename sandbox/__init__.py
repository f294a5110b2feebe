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
from sandbox.evaluation import EvaluationResult, Submission, evaluate

__all__ = [
    "CommandResult",
    "EvaluationResult",
    "Mount",
    "SandboxError",
    "SandboxSpec",
    "SandboxUnavailable",
    "Session",
    "Submission",
    "backend_info",
    "evaluate",
    "open_session",
]
