# Model endpoints: admin-managed (shared) and researcher-supplied (personal) places model calls go,
# the admin's policy for the latter, and the endpoint of each agent config and research run.

import uuid

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("benchmark", "0002_output_fields_without_nul"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="EndpointPolicy",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("researcher_endpoints", models.BooleanField(default=False, help_text="researchers may add their own endpoints (never given a server key)")),
                ("allowed_networks", models.TextField(blank=True, help_text="private IP ranges those endpoints may reach anyway (CIDR, one per line), e.g. 10.20.0.0/16")),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("updated_by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL)),
            ],
        ),
        migrations.CreateModel(
            name="ModelEndpoint",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("code", models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                ("name", models.CharField(max_length=100)),
                ("scope", models.CharField(choices=[("shared", "shared (registered by an admin)"), ("personal", "personal (supplied by a researcher)")], default="shared", max_length=10)),
                ("provider", models.CharField(choices=[("anthropic", "Anthropic"), ("openai", "OpenAI"), ("compat", "OpenAI-compatible (vLLM, Ollama, llama.cpp, ...)")], max_length=10)),
                ("base_url", models.CharField(blank=True, help_text="empty: the provider's public API", max_length=500)),
                ("offers", models.JSONField(blank=True, default=list, help_text='[{"model": ..., "input_per_mtok": 3.0, "output_per_mtok": 15.0}, ...]')),
                ("open_models", models.BooleanField(default=False, help_text="any model name may be asked for, not only the listed")),
                ("key_source", models.CharField(choices=[("none", "no key"), ("env", "an environment variable of the server"), ("stored", "stored encrypted in the database")], default="none", max_length=10)),
                ("key_env_var", models.CharField(blank=True, help_text="name of the variable holding the key", max_length=100)),
                ("key_ciphertext", models.TextField(blank=True, editable=False)),
                ("key_saved_at", models.DateTimeField(blank=True, editable=False, null=True)),
                ("enabled", models.BooleanField(default=True)),
                ("seed", models.CharField(blank=True, editable=False, help_text="which default (seeded from the environment) this is", max_length=20)),
                ("last_check", models.JSONField(blank=True, default=dict, editable=False, help_text="the last test call's result")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                ("owner", models.ForeignKey(blank=True, help_text="personal endpoints: the researcher who may use it; shared: who added it", null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="model_endpoints", to=settings.AUTH_USER_MODEL)),
            ],
            options={"ordering": ["scope", "name"]},
        ),
        migrations.AddField(
            model_name="agentconfig",
            name="endpoint",
            field=models.ForeignKey(blank=True, help_text="where the model is called; empty for model-free and imported agents", null=True, on_delete=django.db.models.deletion.PROTECT, related_name="agents", to="benchmark.modelendpoint"),
        ),
        migrations.AddField(
            model_name="researchrun",
            name="endpoint",
            field=models.ForeignKey(blank=True, help_text="where the backbone is called; empty for released runs", null=True, on_delete=django.db.models.deletion.PROTECT, related_name="research_runs", to="benchmark.modelendpoint"),
        ),
        migrations.AddIndex(
            model_name="modelendpoint",
            index=models.Index(fields=["scope", "enabled", "name"], name="endpoint_choices"),
        ),
        migrations.AddConstraint(
            model_name="modelendpoint",
            constraint=models.UniqueConstraint(condition=models.Q(("scope", "shared")), fields=("name",), name="endpoint_shared_unique_name"),
        ),
        migrations.AddConstraint(
            model_name="modelendpoint",
            constraint=models.UniqueConstraint(condition=models.Q(("scope", "personal")), fields=("owner", "name"), name="endpoint_personal_unique_name"),
        ),
        migrations.AddConstraint(
            model_name="modelendpoint",
            constraint=models.UniqueConstraint(condition=models.Q(("seed", ""), _negated=True), fields=("seed",), name="endpoint_one_per_seed"),
        ),
    ]
