#!/bin/sh
# CLAUDE_CODE_SHELL_PREFIX inside skill-eval's jail: Claude Code gives it each Bash command of
# the agent as one argument; it runs the command in a Landlock domain of its own (confine.py),
# away from Claude Code and the jail's holder, without TCP. Read-only in the jail, so the
# agent cannot rewrite it; SKILL_EVAL_PYTHON is the harness's interpreter (visible read-only).
# Claude Code's cross-session inbox is off in the jail; its address never reaches a command.
unset CLAUDE_CODE_MESSAGING_SOCKET CLAUDE_CODE_MESSAGING_TOKEN
exec "$SKILL_EVAL_PYTHON" -I -S /run/skill-eval/confine.py "$1"
