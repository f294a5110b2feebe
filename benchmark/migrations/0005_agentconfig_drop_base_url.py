# The typed base URL of an agent config is gone: where a model is called is its endpoint's
# (0004 moved every such URL onto an endpoint), so no code path can pair it with a server key.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("benchmark", "0004_seed_endpoints_and_link_agents")]

    operations = [
        migrations.RemoveField(model_name="agentconfig", name="base_url"),
    ]
