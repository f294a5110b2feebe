# Seed the default endpoints from the environment (benchmark.llm.seed) and give every existing
# LLM agent config and research run its endpoint:
# - no base URL: the default endpoint of its provider (where `provider:model` went before);
# - a base URL typed at launch: a personal endpoint of whoever launched it, with no key and behind
#   the SSRF guard, exactly what such a URL gets from now on. (Before this migration such a URL
#   received the server's OPENAI_API_KEY / ANTHROPIC_API_KEY; it never will again.) An openai: or
#   compat: model at a typed URL was an OpenAI-compatible server, so the endpoint is one (it needs
#   no key); an anthropic: one stays Anthropic, and its owner adds their own key to use it.

import os
from urllib.parse import urlsplit

from django.conf import settings
from django.db import migrations

PROVIDERS = ("anthropic", "openai", "compat")


def _normal(url):
    return (url or "").strip().rstrip("/")


def _endpoint_for(ModelEndpoint, model, base_url, owner_id):
    provider, sep, name = (model or "").partition(":")
    if not sep or not name or provider not in PROVIDERS:
        return None  # model-free, imported (mlgym:...) or malformed: no endpoint to call
    default = ModelEndpoint.objects.filter(scope="shared", seed=provider).first()
    if not _normal(base_url):
        return default
    if default is not None and _normal(default.base_url) == _normal(base_url):
        return default
    if provider == "openai":
        provider = "compat"
    existing = ModelEndpoint.objects.filter(
        scope="personal", owner_id=owner_id, provider=provider, base_url=base_url.strip()
    ).first()
    if existing is not None:
        return existing
    host = urlsplit(base_url.strip()).netloc or base_url.strip()
    label, counter = f"{provider} at {host}"[:90], 1
    name = label
    while ModelEndpoint.objects.filter(scope="personal", owner_id=owner_id, name=name).exists():
        counter += 1
        name = f"{label} ({counter})"
    return ModelEndpoint.objects.create(
        name=name,
        scope="personal",
        owner_id=owner_id,
        provider=provider,
        base_url=base_url.strip(),
        key_source="none",
        open_models=True,
        offers=[],
        enabled=True,
    )


def forwards(apps, schema_editor):
    from benchmark.llm.seed import endpoints_seed

    ModelEndpoint = apps.get_model("benchmark", "ModelEndpoint")
    AgentConfig = apps.get_model("benchmark", "AgentConfig")
    ResearchRun = apps.get_model("benchmark", "ResearchRun")
    endpoints_seed(
        ModelEndpoint,
        environ=os.environ,
        anthropic_base_url=getattr(settings, "ANTHROPIC_BASE_URL", None) or "",
        openai_base_url=getattr(settings, "OPENAI_BASE_URL", None) or "",
    )
    for agent in AgentConfig.objects.filter(kind="model", endpoint__isnull=True).exclude(model="").iterator():
        endpoint = _endpoint_for(ModelEndpoint, agent.model, agent.base_url, agent.created_by_id)
        if endpoint is not None:
            agent.endpoint = endpoint
            agent.save(update_fields=["endpoint"])
    for run in ResearchRun.objects.filter(source="referee", endpoint__isnull=True).iterator():
        run_settings = dict(run.settings or {})
        endpoint = _endpoint_for(ModelEndpoint, run.backbone, run_settings.pop("base_url", ""), run.owner_id)
        run.endpoint = endpoint
        run.settings = run_settings
        run.save(update_fields=["endpoint", "settings"])


def backwards(apps, schema_editor):
    AgentConfig = apps.get_model("benchmark", "AgentConfig")
    ResearchRun = apps.get_model("benchmark", "ResearchRun")
    for agent in AgentConfig.objects.filter(endpoint__scope="personal").select_related("endpoint"):
        agent.base_url = agent.endpoint.base_url
        agent.save(update_fields=["base_url"])
    for run in ResearchRun.objects.filter(endpoint__scope="personal").select_related("endpoint"):
        run.settings = {**(run.settings or {}), "base_url": run.endpoint.base_url}
        run.save(update_fields=["settings"])
    AgentConfig.objects.update(endpoint=None)
    ResearchRun.objects.update(endpoint=None)


class Migration(migrations.Migration):
    dependencies = [("benchmark", "0003_model_endpoints")]

    operations = [migrations.RunPython(forwards, backwards)]
