#!/bin/sh
# Claude Code's CLAUDE_CODE_SHELL_PREFIX inside skill-eval's jail: it gets each Bash command of
# the agent as one argument and runs it in a PID namespace of its own, so what the agent runs
# sees neither Claude Code nor the jail's holder (no /proc/<pid>/fd of theirs to write into)
# and nothing it starts outlives the command. Without bubblewrap (--no-jail) it runs as is.
if command -v bwrap >/dev/null 2>&1 && [ -z "${SKILL_EVAL_NO_JAIL:-}" ]; then
  exec bwrap --unshare-user --unshare-pid --dev-bind / / --proc /proc --die-with-parent \
    /bin/bash -c "$1"
fi
exec /bin/bash -c "$1"
