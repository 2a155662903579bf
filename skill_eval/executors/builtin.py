"""The built-in executors as data: `--executor` name -> "module:SPEC" in this package.
A module is imported only when its executor (or grader) is first used."""

BUILTIN_EXECUTORS = {
    "anthropic": "anthropic_api:SPEC",
    # Claude Code through claude-agent-sdk (the hand-written `claude -p` driver without it).
    "claude-cli": "claude_code:SPEC",
    "mock": "mock:SPEC",
    # OpenAI-compatible Chat Completions: local open models (Ollama, vLLM, llama.cpp) and more.
    "openai": "openai_api:SPEC",
}
