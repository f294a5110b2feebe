"""Each reviewer's queue in a keyed shuffle (review.queue_order): a secret per campaign, a stored key
per assignment, and an index for the queue's query.

AddField with a callable default would give every existing campaign the same secret (Django
evaluates it once for the column), so the columns are added nullable, filled row by row with
fresh values, and only then made NOT NULL.
"""

import hashlib
import hmac
import secrets

from django.db import migrations, models

import review.queue_order


def _key(secret: str, reviewer_id: int, item_id: int) -> int:
    # Frozen copy of review.queue_order.queue_key as it was when this migration was written.
    digest = hmac.new(secret.encode(), f"{reviewer_id}:{item_id}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def fill_secrets_and_keys(apps, schema_editor):
    Campaign = apps.get_model("review", "Campaign")
    Assignment = apps.get_model("review", "Assignment")
    for campaign in Campaign.objects.filter(queue_secret__isnull=True).only("pk"):
        campaign.queue_secret = secrets.token_hex(32)
        campaign.save(update_fields=["queue_secret"])
    secret_of = dict(Campaign.objects.values_list("pk", "queue_secret"))
    rows = list(Assignment.objects.filter(queue_key__isnull=True).only("pk", "campaign_id", "reviewer_id", "item_id"))
    for row in rows:
        row.queue_key = _key(secret_of[row.campaign_id], row.reviewer_id, row.item_id)
    Assignment.objects.bulk_update(rows, ["queue_key"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("review", "0011_campaign_tells"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="queue_secret",
            field=models.CharField(editable=False, max_length=64, null=True),
        ),
        migrations.AddField(
            model_name="assignment",
            name="queue_key",
            field=models.BigIntegerField(editable=False, null=True),
        ),
        migrations.RunPython(fill_secrets_and_keys, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="campaign",
            name="queue_secret",
            field=models.CharField(default=review.queue_order.new_queue_secret, editable=False, max_length=64),
        ),
        migrations.AlterField(
            model_name="assignment",
            name="queue_key",
            field=models.BigIntegerField(
                editable=False,
                help_text="place in the reviewer's queue: keyed shuffle, set on save (review.queue_order)",
            ),
        ),
        migrations.AddIndex(
            model_name="assignment",
            index=models.Index(fields=["reviewer", "campaign", "queue_key"], name="assignment_queue_order"),
        ),
    ]
