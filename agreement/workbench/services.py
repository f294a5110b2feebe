"""The workbench's one write: an admin's tag of a disagreement (one per item and criterion)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from review.models import CampaignItem, DisagreementTag


def tag_save(*, item: CampaignItem, criterion: str, cause: str, note: str, user: Any) -> DisagreementTag:
    """Upsert the one tag of (item, criterion): a second diagnosis replaces the first."""
    with transaction.atomic():
        tag, _ = DisagreementTag.objects.update_or_create(
            item=item,
            criterion=criterion,
            defaults={"campaign_id": item.campaign_id, "cause": cause, "note": note, "tagged_by": user},
        )
    return tag
