from django.apps import AppConfig


class BenchmarkConfig(AppConfig):
    name = "benchmark"
    verbose_name = "Benchmark: tasks, runs, research pipeline"

    def ready(self) -> None:
        from benchmark import signals

        signals.connect()
