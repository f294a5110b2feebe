from importlib import import_module

from django.core.management.base import BaseCommand

# Each app may offer `<app>/demo.py` with `seed(stdout) -> None`; called in dependency order.
DEMO_APPS = ("benchmark", "judge", "review")


class Command(BaseCommand):
    help = "Load the demo data of every app (built-in tasks, released MLGym/MLR-Bench data when present). Idempotent."

    def handle(self, *args, **options) -> None:
        for app in DEMO_APPS:
            try:
                module = import_module(f"{app}.demo")
            except ModuleNotFoundError as exc:
                if exc.name != f"{app}.demo":
                    raise
                continue
            self.stdout.write(f"[{app}] seeding demo data")
            module.seed(stdout=self.stdout)
