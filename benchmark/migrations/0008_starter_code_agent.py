# The model-free agent's runs were named "baseline", the name of the leaderboards' reference row
# (the task's computed baseline score): both rows merged into one. They are "starter-code" now.

from django.db import migrations, models

OLD, NEW = "baseline", "starter-code"


def rename(apps, schema_editor, old=OLD, new=NEW):
    AgentConfig = apps.get_model("benchmark", "AgentConfig")
    Run = apps.get_model("benchmark", "Run")
    AgentConfig.objects.filter(kind="baseline", name=old).update(name=new)
    Run.objects.filter(agent__kind="baseline", method=old).update(method=new)


def rename_back(apps, schema_editor):
    rename(apps, schema_editor, old=NEW, new=OLD)


class Migration(migrations.Migration):
    dependencies = [
        ("benchmark", "0007_step_execution_time_unknown"),
    ]

    operations = [
        migrations.AlterField(
            model_name="agentconfig",
            name="kind",
            field=models.CharField(
                choices=[
                    ("model", "LLM agent"),
                    ("baseline", "starter code (the task's baseline, no model)"),
                    ("replay", "replay of a stored trajectory"),
                ],
                default="model",
                max_length=10,
            ),
        ),
        migrations.RunPython(rename, rename_back),
    ]
