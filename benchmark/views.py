"""The benchmark app's pages live in modules by subject: run_views (runs), task_views (tasks),
leaderboards, research_views. Who may see a run is decided in benchmark.permissions."""
