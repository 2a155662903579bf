"""Agent CLIs beside Claude Code, each attempt one jailed run: `opencode` (OpenCode, Chat
Completions) and `codex` (Codex CLI, Responses), against an OpenAI-style API.

config (their own settings) -> binaries (which CLI, its ripgrep) -> delivery (the skill by
mode: installed, context, system, prepend) -> executor (the run every agent shares, on
agent_launch.py) -> opencode / codex (the command, its environment) -> opencode_events /
codex_events (their JSON events into the attempt, over events.py); opencode_tools (tools as
OpenCode permissions). references/agents.md says what each agent loads and how it is
isolated."""
