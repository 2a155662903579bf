"""The built-in executors as data: `--executor` name -> "module:SPEC" in this package.
A module is imported only when its executor (or grader) is first used."""

BUILTIN_EXECUTORS = {
    "anthropic": "anthropic_api:SPEC",
    # Claude Code, one jailed `claude -p --output-format stream-json` run per attempt.
    "claude-cli": "claude.executor:SPEC",
    # Codex CLI and OpenCode, each attempt one jailed run against an OpenAI-style API.
    "codex": "agents.codex:SPEC",
    "mock": "mock:SPEC",
    # OpenAI-compatible Chat Completions: local open models (Ollama, vLLM, llama.cpp) and more.
    "openai": "openai_api:SPEC",
    "opencode": "agents.opencode:SPEC",
}
