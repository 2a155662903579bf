"""The `claude-cli` executor: Claude Code, one jailed run per attempt, judgement or text reply.

binary (which CLI, its version) -> environment (what the child gets) -> tools (which tools,
how Bash is confined) -> launch (the jailed run) -> stream (its stream-json, read) -> executor
(attempts) and models (grader, text model). config holds the executor's own settings."""
