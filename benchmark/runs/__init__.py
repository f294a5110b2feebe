"""Agent runs: launch, cancel, share, replay, resume (services; queueing: jobs and orphans;
resume: replaying committed steps), the RQ job and its heartbeat, the recorder and live progress
(one group per run), the stream consumer, the pages, who may see a run, and MLGym `.traj` import
and export.

A run's path: views.run_launch -> services.run_launch -> jobs.execute_run ->
services.run_execute (sandbox from benchmark.tasks.evaluation, the loop from benchmark.agent,
model calls through benchmark.llm) -> progress.step_append -> consumers.RunStreamConsumer ->
static/js/run.js.
"""
