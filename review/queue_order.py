"""The order in which a reviewer meets their items: a shuffle keyed by a per-campaign secret.

Items are created in the order the admin picked them (the campaign form lists papers by task, then
system) or in the order an import read them, so listing a reviewer's items by creation showed
ten papers of one system in a row: one tell (a quirk of style, a chart's look) then named a whole
block. Each assignment instead stores `queue_key`, HMAC-SHA256(campaign secret, reviewer id : item
id) cut to a signed 64-bit integer, and every list or step through a reviewer's items sorts by it.

- stable: the key is stored with the assignment, so reloads, later assignments and reassignments
  leave the order of what is already there as it was;
- keyed: without the campaign's secret (never shown to reviewers, nor to anyone in a page) the
  order cannot be predicted, and it is not the creation order, nor grouped by system;
- per reviewer and per campaign: the reviewer id and the campaign's secret are in the message.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets


def new_queue_secret() -> str:
    """A fresh campaign secret (256 bits, hex)."""
    return secrets.token_hex(32)


def queue_key(*, secret: str, reviewer_id: int, item_id: int) -> int:
    """The assignment's place in the reviewer's queue: a signed 64-bit integer (fits a BigIntegerField)."""
    digest = hmac.new(secret.encode(), f"{reviewer_id}:{item_id}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
