#!/bin/sh
# An agent CLI's shell prefix inside skill-eval's jail: the CLI gives it each shell command of
# the agent as one argument; it runs the command in a Landlock domain of its own (confine.py),
# away from the CLI and the jail's holder, without TCP. Read-only in the jail, so the agent
# cannot rewrite it; SKILL_EVAL_PYTHON is the harness's interpreter (visible read-only).
# SKILL_EVAL_UNSET names variables of the CLI's own that no command may see (the executor
# sets it: an address of the CLI's, a token).
for name in $SKILL_EVAL_UNSET; do unset "$name"; done
unset SKILL_EVAL_UNSET
exec "$SKILL_EVAL_PYTHON" -I -S /run/skill-eval/confine.py "$1"
