# Each judgment records the endpoint its judge model is called at (empty for imported judgments
# and for those requested before endpoints existed: they resolve to the provider's default).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("benchmark", "0003_model_endpoints"),
        ("judge", "0003_output_fields_without_nul"),
    ]

    operations = [
        migrations.AddField(
            model_name="judgment",
            name="endpoint",
            field=models.ForeignKey(blank=True, help_text="where the judge model is called; empty for imported judgments", null=True, on_delete=django.db.models.deletion.PROTECT, related_name="judgments", to="benchmark.modelendpoint"),
        ),
    ]
