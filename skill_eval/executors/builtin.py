"""The built-in executors as data: `--executor` name -> "module:SPEC" in this package.
A module is imported only when its executor (or grader) is first used."""

BUILTIN_EXECUTORS = {
    "anthropic": "anthropic_api:SPEC",
    "claude-cli": "claude_cli:SPEC",
    "mock": "mock:SPEC",
}
