"""Which papers can be blinded at all, and an item's blinded render stored once: what the item page
shows every reviewer, and every change it makes, for the admin."""

from __future__ import annotations

from django.db.models import Q

from benchmark.models import Artifact
from review.blinding import blinded
from review.blinding.scrubbing import item_system_names
from review.models import CampaignItem


def cannot_blind(artifact: Artifact) -> bool:
    """A paper that came as a PDF and yielded no text: reviewers would have only the original to read."""
    data = artifact.data or {}
    return bool(data.get("pdf")) and not (artifact.content or "").strip()


UNBLINDABLE = Q(data__has_key="pdf") & ~Q(data__pdf="") & Q(content="")  # the same rule, for querysets


def item_prerender(*, item: CampaignItem, force: bool = False) -> None:
    """Store the item's blinded render (see CampaignItem.rendered_html) and the list of every change
    it makes to the item's texts (CampaignItem.blinding_changes, shown to the admin)."""
    artifact = item.artifact
    names = item_system_names(item)
    text = blinded.reviewer_text(item, names)
    key = blinded.render_key(text, list(artifact.files or []), names)
    if item.rendered_key == key and not force:
        return
    html, used = blinded.render_blinded(text, tuple(artifact.files or []), tuple(names))
    item.rendered_html, item.rendered_figures = html, list(used)
    item.rendered_key = key
    item.blinding_changes = blinded.item_changes(item, names)
    item.save(update_fields=["rendered_html", "rendered_figures", "rendered_key", "blinding_changes"])
