"""Tasks: the task definition formats (spec, folder, mlgym), finding and versioning them
(loader), preparing a workspace and scoring artifacts in sandboxes (evaluation), the computed
baselines (baselines), the pages (views), and the seven built-in tasks (builtin/)."""
