"""The agent, without Django: the environment and its tool set on one sandbox shell
(environment, memory, lint), the loop (loop), who decides the next action (policies: an LLM, the
task's starter code, a stored trajectory), the prompt (prompt) and reply parsing (parsing)."""
