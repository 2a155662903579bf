"""The built-in executors as data: `--executor` name -> "module:SPEC" in this package.
A module is imported only when its executor (or grader) is first used. Adding an executor is
one line here; what it can do is declared on its ExecutorSpec and ExecutorBase subclass, and
every list of executors elsewhere is derived from the registry (executors/catalog.py)."""

BUILTIN_EXECUTORS = {
    "anthropic": "anthropic_spec:SPEC",
    # Claude Code, one jailed `claude -p --output-format stream-json` run per attempt.
    "claude-cli": "claude.executor:SPEC",
    # Codex CLI and OpenCode, each attempt one jailed run against an OpenAI-style API.
    "codex": "agents.codex:SPEC",
    "mock": "mock:SPEC",
    # OpenAI-compatible Chat Completions: local open models (Ollama, vLLM, llama.cpp) and more.
    "openai": "openai_api:SPEC",
    "opencode": "agents.opencode:SPEC",
}
# The executor a run uses when neither --executor nor --mock names one (and `validate
# --judges` judges with by default).
DEFAULT_EXECUTOR = "claude-cli"
# The executor without a model (`--mock`): scripted or fixed answers, offline. Its grader
# judges when no executor that can grade is named.
OFFLINE_EXECUTOR = "mock"
