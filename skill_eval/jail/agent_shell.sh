#!/bin/sh
# CLAUDE_CODE_SHELL_PREFIX inside skill-eval's jail: Claude Code gives it each Bash command of
# the agent as one argument; it runs the command in a Landlock domain of its own (confine.py),
# away from Claude Code and the jail's holder, without TCP. Read-only in the jail, so the
# agent cannot rewrite it; SKILL_EVAL_PYTHON is the harness's interpreter (visible read-only).
exec "$SKILL_EVAL_PYTHON" -I -S /run/skill-eval/confine.py "$1"
