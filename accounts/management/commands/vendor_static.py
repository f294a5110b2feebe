import shutil
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand


def plotly_bundle() -> Path:
    import plotly

    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.exists():
        raise FileNotFoundError(f"plotly.min.js not found in the plotly package at {path}")
    return path


class Command(BaseCommand):
    help = "Copy plotly.js from the installed plotly package into static/vendor/ (no CDN anywhere)."

    def handle(self, *args, **options) -> None:
        target = Path(settings.BASE_DIR) / "static" / "vendor" / "plotly.min.js"
        source = plotly_bundle()
        if target.exists() and target.stat().st_size == source.stat().st_size:
            self.stdout.write(f"{target} is up to date")
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        self.stdout.write(f"copied {source} -> {target}")
