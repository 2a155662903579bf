#!/bin/sh
# $SHELL inside skill-eval's jail for an agent that runs each command as `$SHELL -c COMMAND`:
# the command runs in a Landlock domain of its own (confine.py), away from the agent's CLI and
# the jail's holder, without TCP. Read-only in the jail, so the agent
# cannot rewrite it; SKILL_EVAL_PYTHON is the harness's interpreter (visible read-only).
case "$1" in
    -c|-lc|-cl) [ "$#" -eq 2 ] && exec "$SKILL_EVAL_PYTHON" -I -S /run/skill-eval/confine.py "$2" ;;
    -l) [ "$#" -eq 3 ] && [ "$2" = "-c" ] && exec "$SKILL_EVAL_PYTHON" -I -S /run/skill-eval/confine.py "$3" ;;
esac
echo "skill-eval: this shell runs one command: -c COMMAND" >&2
exit 126
