"""Run one command of the agent's in a Landlock domain of its own, inside the attempt's jail:
`python -I -S confine.py COMMAND` runs `/bin/bash -c COMMAND` so that it and everything it
starts cannot trace, read the memory or /proc fds of, or signal any process outside the
domain (the agent's CLI, the jail's holder), and (Landlock ABI 4 and up) cannot open or
accept a TCP connection: the model API the jail forwards is the agent's, not its tools'.

An agent CLI runs it as the prefix of each shell command (agent_shell.sh) or as its $SHELL
(agent_shell_c.sh). The jail's holder first puts the whole agent CLI in a domain of its own
with `restrict(..., connect_ports=(FORWARD_PORT,))` before it runs a single instruction: it
and everything it starts may reach the model API and nothing else, and cannot signal or trace
the holder; for a CLI whose commands run in a shell the model chooses, that domain is the
only fence between its commands and the holder. Unprivileged (no capability, no namespace),
so it works inside the jail where a nested bubblewrap cannot mount its /proc. Where Landlock
is missing it refuses to run the command: the executor checks first (`python confine.py
--check`) and does not offer a shell there.

Every domain also keeps its processes from reaching into one another, which Landlock allows
within a domain: a seccomp filter refuses ptrace, process_vm_readv/writev and pidfd_getfd (no
fd taken from the agent's CLI, no code written into it), and no file under /proc opens for
writing (no /proc/PID/mem). A command that escapes the shell prefix before this domain (a
startup file the CLI sources first) is still in the CLI's own domain: it finds nothing more
than the CLI had, which is the API forward.

The jail itself, whichever provider built it, runs under `jail_filter()`: bubblewrap loads it
with `--seccomp`, a container's first command is `confine.py --jail -- ARGV`. Its sockets are
those of JAIL_FAMILIES, no io_uring, no foreign ABI.

Standard library only, no site packages (-S): it starts in a few milliseconds.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same on every architecture
VERSION_FLAG = 1
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
WRITE_FILE = 1 << 1
MAKE_CHAR, MAKE_BLOCK = 1 << 6, 1 << 11  # device nodes: nobody's tool makes them
BIND_TCP, CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2
O_PATH = 0o10000000
# (audit arch, first x32 number, socket; ptrace, process_vm_readv, process_vm_writev,
# pidfd_getfd)
_SYSCALLS = {
    "x86_64": (0xC000003E, 0x40000000, 41, (101, 310, 311, 438)),
    "aarch64": (0xC00000B7, 0xFFFFFFFF, 198, (117, 270, 271, 438)),
}
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
# The socket families a jail's processes may open (jail_filter); the agent's own domains
# (restrict) drop AF_UNIX. Every other family is refused: vsock (not confined by the network
# namespace: on a virtual machine it may reach the host), packet, Bluetooth, CAN, ...
JAIL_FAMILIES = (AF_UNIX, AF_INET, AF_INET6, AF_NETLINK)
AGENT_FAMILIES = (AF_INET, AF_INET6, AF_NETLINK)
IO_URING = (425, 426, 427)  # io_uring_setup, _enter, _register: the same on every architecture


def abi(libc: ctypes.CDLL) -> int:
    """Landlock's ABI version here; 0 when the kernel has none (or it is disabled)."""
    version = libc.syscall(CREATE_RULESET, None, 0, VERSION_FLAG)
    return max(int(version), 0)


_has_landlock: list[bool] = []  # (functools would cost this script's start-up)


def landlock() -> bool:
    """Whether this kernel has Landlock (for the harness: asked once per process)."""
    if not _has_landlock:
        _has_landlock.append(abi(ctypes.CDLL(None, use_errno=True)) > 0)
    return _has_landlock[0]


def restrict(libc: ctypes.CDLL, version: int, connect_ports: tuple[int, ...] = ()) -> None:
    """Put this process (and what it will start) in a new Landlock domain: no TCP but a
    connection to each of `connect_ports` (on loopback: the jail has no other network), no
    file under /proc written, and (seccomp) no reaching into another process's memory or fds."""
    handled_net = BIND_TCP | CONNECT_TCP if version >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if version >= 6 else 0
    # Device-node creation allowed nowhere, writing allowed beneath everything but /proc:
    # every other file stays as the jail made it (read-only or the attempt's own).
    attr = struct.pack("QQQ", WRITE_FILE | MAKE_CHAR | MAKE_BLOCK, handled_net, scoped)
    size = 24 if version >= 6 else 16 if version >= 4 else 8
    ruleset = libc.syscall(CREATE_RULESET, ctypes.c_char_p(attr[:size]), size, 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    rules = [(RULE_NET_PORT, struct.pack("QQ", CONNECT_TCP, port)) for port in connect_ports]
    opened = _writable_tops()
    rules += [(RULE_PATH_BENEATH, struct.pack("=Qi", WRITE_FILE, fd)) for fd in opened]
    try:
        for kind, rule in rules if handled_net else rules[len(connect_ports) :]:
            if libc.syscall(ADD_RULE, ruleset, kind, ctypes.c_char_p(rule), 0) != 0:
                raise OSError(ctypes.get_errno(), "landlock_add_rule")
    finally:
        for fd in opened:
            os.close(fd)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    _no_reaching_in(libc)
    if libc.syscall(RESTRICT_SELF, ruleset, 0) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    os.close(ruleset)


def _writable_tops() -> list[int]:
    """An O_PATH fd of each folder at the root but /proc (links are reached through them)."""
    fds = []
    for name in sorted(os.listdir("/")):
        path = "/" + name
        if name != "proc" and os.path.isdir(path) and not os.path.islink(path):
            fds.append(os.open(path, O_PATH | os.O_CLOEXEC))
    return fds


def _no_reaching_in(libc: ctypes.CDLL) -> None:
    """A seccomp filter: ptrace, process_vm_readv/writev, pidfd_getfd and io_uring fail with
    EPERM, a socket of a family outside AGENT_FAMILIES too (no Unix socket of one's own: no
    connection to a socket by its path, such as an agent's cross-session inbox; socketpair
    still works; no vsock, no packet socket), and so does every call of another ABI (i386,
    x32) than this machine's own."""
    _install(libc, program(reaching_in=True, families=AGENT_FAMILIES))


def program(*, reaching_in: bool, families: tuple[int, ...]) -> bytes:
    """The seccomp program (struct sock_filter[]) for this machine: a socket only of
    `families`, no io_uring (whose requests seccomp never sees), no call of a foreign ABI,
    and (`reaching_in`) none of the calls that reach into another process; each refused
    with EPERM. OSError where this machine's numbers are not known."""
    known = _SYSCALLS.get(os.uname().machine)
    if known is None:
        raise OSError(95, f"no seccomp filter for {os.uname().machine}")
    arch, foreign, socket, numbers = known
    denied = (*(numbers if reaching_in else ()), *IO_URING)
    deny, allow = 0x00050000 | 1, 0x7FFF0000  # SECCOMP_RET_ERRNO | EPERM; SECCOMP_RET_ALLOW
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    # (code, jump if true, jump if false, k); a jump names its target: "deny" or "allow"
    steps: list[tuple[int, int | str, int | str, int]] = [
        (ld, 0, 0, 4),  # the call's ABI
        (jeq, 0, "deny", arch),
        (ld, 0, 0, 0),  # its number
        (jge, "deny", 0, foreign),
        *((jeq, "deny", 0, nr) for nr in denied),
        (jeq, 0, "allow", socket),
        (ld, 0, 0, 16),  # socket's first argument: the address family
        *((jeq, "allow", 0, family) for family in families),
        (ret, 0, 0, deny),
        (ret, 0, 0, allow),
        (ret, 0, 0, deny),
    ]
    where = {"allow": len(steps) - 2, "deny": len(steps) - 1}
    return b"".join(
        struct.pack("HBBI", op, *(where[j] - i - 1 if isinstance(j, str) else j for j in to), k)
        for i, (op, *to, k) in enumerate(steps)
    )


def _install(libc: ctypes.CDLL, code: bytes) -> None:
    buffer = ctypes.create_string_buffer(code)
    fprog = struct.pack("HxxxxxxP", len(code) // 8, ctypes.addressof(buffer))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.c_char_p(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


def jail_filter() -> bytes:
    """The program every jail's processes run under, whichever provider started it: a socket
    only of JAIL_FAMILIES, no io_uring, no foreign ABI."""
    return program(reaching_in=False, families=JAIL_FAMILIES)


def main(argv: list[str]) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    if argv[:2] == ["--jail", "--"] and len(argv) > 2:  # a jail's first command (container.py)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        _install(libc, jail_filter())
        os.execvp(argv[2], argv[2:])
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
