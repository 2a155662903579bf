"""Run one command of the agent's in a Landlock domain of its own, inside the attempt's jail:
`python -I -S confine.py COMMAND` runs `/bin/bash -c COMMAND` so that it and everything it
starts cannot trace, read the memory or /proc fds of, or signal any process outside the
domain (the agent's CLI, the jail's holder), and (Landlock ABI 4 and up) cannot open or
accept a TCP connection: the model API the jail forwards is the agent's, not its tools'.

Claude Code runs it through CLAUDE_CODE_SHELL_PREFIX for every Bash call, OpenCode as its
$SHELL (agent_shell_c.sh). The jail's holder puts a whole agent CLI in a domain of its own
with `restrict(..., connect_ports=(FORWARD_PORT,))` (it may reach the model API and nothing
else, and cannot signal or trace the holder): for Codex, whose commands run in a shell the
model chooses, that domain is the only fence between its commands and the holder.
Unprivileged (no capability, no namespace), so it works inside the jail where a nested
bubblewrap cannot mount its /proc. Where Landlock is missing it refuses to run the command:
the executor checks first (`python confine.py --check`) and does not offer Bash there.

Standard library only, no site packages (-S): it starts in a few milliseconds.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same on every architecture
VERSION_FLAG = 1
PR_SET_NO_NEW_PRIVS = 38
MAKE_CHAR, MAKE_BLOCK = 1 << 6, 1 << 11  # device nodes: nobody's tool makes them
BIND_TCP, CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
RULE_NET_PORT = 2


def abi(libc: ctypes.CDLL) -> int:
    """Landlock's ABI version here; 0 when the kernel has none (or it is disabled)."""
    version = libc.syscall(CREATE_RULESET, None, 0, VERSION_FLAG)
    return max(int(version), 0)


def restrict(libc: ctypes.CDLL, version: int, connect_ports: tuple[int, ...] = ()) -> None:
    """Put this process (and what it will start) in a new Landlock domain: no TCP but a
    connection to each of `connect_ports` (on loopback: the jail has no other network)."""
    handled_net = BIND_TCP | CONNECT_TCP if version >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if version >= 6 else 0
    # Handling only device-node creation (and allowing it nowhere) leaves every file the
    # agent may touch as the jail made it; the domain itself is what fences off the rest.
    attr = struct.pack("QQQ", MAKE_CHAR | MAKE_BLOCK, handled_net, scoped)
    size = 24 if version >= 6 else 16 if version >= 4 else 8
    ruleset = libc.syscall(CREATE_RULESET, ctypes.c_char_p(attr[:size]), size, 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    for port in connect_ports if handled_net else ():
        rule = struct.pack("QQ", CONNECT_TCP, port)
        if libc.syscall(ADD_RULE, ruleset, RULE_NET_PORT, ctypes.c_char_p(rule), 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_add_rule")
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.syscall(RESTRICT_SELF, ruleset, 0) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    os.close(ruleset)


def main(argv: list[str]) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    version = abi(libc)
    if argv[:1] == ["--check"]:
        print(version)
        return 0 if version else 1
    if not version:
        sys.stderr.write("skill-eval: this kernel has no Landlock; the command was not run\n")
        return 126
    restrict(libc, version)
    os.execv("/bin/bash", ["bash", "-c", argv[0] if argv else ""])
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
