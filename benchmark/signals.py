"""A run share saved or deleted, or a run deleted (by the service, the Django admin or a shell),
tells the run's open websockets to check their permission again: a revoked viewer's stream
closes at once (accounts.consumers.AccessGuard)."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save


def _announce(run_id: int) -> None:
    from accounts.progress import access_changed
    from benchmark.models import Run
    from benchmark.runs.progress import run_group

    code = Run.objects.filter(pk=run_id).values_list("code", flat=True).first()
    if code is not None:
        access_changed(run_group(code))


def _share_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    _announce(instance.run_id)


def _run_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    from accounts.progress import access_changed
    from benchmark.runs.progress import run_group

    access_changed(run_group(instance.code))


def connect() -> None:
    from benchmark.models import Run, RunShare

    post_save.connect(_share_changed, sender=RunShare, dispatch_uid="benchmark.share_saved")
    post_delete.connect(_share_changed, sender=RunShare, dispatch_uid="benchmark.share_deleted")
    post_delete.connect(_run_deleted, sender=Run, dispatch_uid="benchmark.run_deleted")
