"""MLR-Bench research: the tasks (tasks), the MLR-Agent pipeline's stages (pipeline) and runs
(services, jobs, progress, consumers), the experiment stage's agent (experiment, agent), literature
search (literature), stage files (files), the released runs' import (imports), and the pages
(views, forms, permissions)."""
