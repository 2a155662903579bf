"""The two ends of the docker provider's link (link.py), each `python -I -S link_ends.py`:

    outside --fds 7,9,12 -- docker run -i ... IMAGE python3 -I -S link_ends.py inside
        --count 2 --files -- ARGV...

`outside` runs on the harness's side where bwrap would: it starts the container CLI and
relays its own fds 1 and 2 and the listed fds (channels 1, 2, 3, ...) over the CLI's stdin
and stdout, and exits with the command's status. `inside` is the container's first process:
a socketpair per channel, ARGV started with their other ends as its fds 1, 2, 3, ... (stdin
/dev/null), and `--files` serves one more channel with tree_wire.py (the workspace seeded and
copied back without /proc, for a daemon on another machine). When ARGV ends, every other
process of the container is killed (none is spared: this is the first), what they wrote is
relayed and EXIT says ARGV's status; when its stdin closes (the harness or the CLI died), all
is killed at once. Being the first process, nothing in the container can signal it.
"""

from __future__ import annotations

import _socket
import os
import sys
import time

TYPE_CHECKING = False  # (typing is not imported: both ends start on every jail's path)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .link import EXIT, Mux


def _load(name: str, into: dict[str, Any]) -> None:
    """Run the module `name` beside this file into `into` (importlib would cost more than the
    rest of the start-up; run as a script, this file has no package to import from)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    with open(path, "rb") as source:
        exec(compile(source.read(), path, "exec"), into)


if not TYPE_CHECKING:
    _load("link.py", globals())  # Mux and the frame kinds

SIGKILL, SIGPIPE, SIGXFSZ, SIGCHLD = 9, 13, 25, 17
PR_SET_DUMPABLE = 4
DRAIN = 10.0  # seconds an end relays what is left once its command ended, at most


def outside(fds: list[int], argv: list[str]) -> int:
    """Start the container CLI (`argv`) and relay fds 1, 2 and `fds` over its stdin/stdout."""
    to_cli, cli_in = os.pipe()
    cli_out, from_cli = os.pipe()
    for fd in (cli_in, cli_out):
        os.set_inheritable(fd, False)
    actions = [(os.POSIX_SPAWN_DUP2, to_cli, 0), (os.POSIX_SPAWN_DUP2, from_cli, 1)]
    pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions, setsigdef=(SIGPIPE,))
    os.close(to_cli)
    os.close(from_cli)
    mux = Mux(cli_out, cli_in, inside=False)
    mux.add(1, 1, reading=False)
    mux.add(2, 2, reading=False)
    for channel, fd in enumerate(fds, start=3):
        mux.add(channel, fd)
    while mux.wire_open and mux.exit_code is None:
        mux.step(None)
    deadline = time.monotonic() + DRAIN  # the command ended: hand on what came, then go
    while any(chan.pending for chan in mux.chans.values()) and time.monotonic() < deadline:
        mux.step(0.05)
    os.close(cli_in)
    if mux.exit_code is None:  # the CLI ended first (it could not start the container)
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        return code if code >= 0 else 128 - code
    # The container ended: its removal is the daemon's (`--rm`), which the CLI would wait for;
    # its result is this one's without that wait.
    return mux.exit_code if mux.exit_code >= 0 else 128 - mux.exit_code


def inside(count: int, files: bool, argv: list[str]) -> int:
    """Run `argv` with `count` relayed sockets as its fds 3...; relay them, its stdout and its
    stderr over this process's stdin/stdout; `files`: one more channel, served here."""
    if TYPE_CHECKING:
        import signal as _signal
    else:
        import _signal  # (`signal` imports enum: more than the rest of the start-up)

    if os.getpid() != 1:  # its end kills every process it may signal: only in a container
        os.write(2, b"link_ends.py: inside runs only as a container's first process\n")
        return 125
    _undumpable()
    mux = Mux(0, 1, inside=True)
    theirs: list[int] = []
    for channel in range(1, 3 + count):
        ours, other = _socket.socketpair()
        mux.add(channel, ours.detach())
        theirs.append(other.detach())
    service = 3 + count if files else None
    if service is not None:
        ours, served = _socket.socketpair()
        mux.add(service, ours.detach())
        _serve_files(served)
    wake_r, wake_w = os.pipe()  # a SIGCHLD writes here: poll wakes up
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    _signal.set_wakeup_fd(wake_w)
    _signal.signal(SIGCHLD, lambda signum, frame: None)
    child, code = _spawn(argv, theirs), None
    while code is None and mux.wire_open:
        if mux.step(None, (wake_r,)):
            _drain(wake_r)
            code = _reap(child)
    _kill_all()
    if not mux.wire_open:  # the harness is gone: nobody to tell
        return 137
    if service is not None and service in mux.chans:  # its thread sees EOF and ends
        mux.chans.pop(service).close()
    deadline = time.monotonic() + DRAIN
    while any(c.reading or c.pending for c in mux.chans.values()):
        if time.monotonic() > deadline:
            break
        if mux.step(0.05, (wake_r,)):
            _drain(wake_r)
            _reap(-1)
    status = code if code is not None else 137
    mux.send(EXIT, 0, status.to_bytes(4, "big", signed=True))
    mux.flush(time.monotonic() + DRAIN)
    return status if status >= 0 else 128 - status


def _undumpable() -> None:
    """No process of the container's uid may trace this one or read its memory (every stream
    of the jail passes through it): the kernel's own rule for a process not dumpable. The
    command it starts is dumpable again (an exec resets it)."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _spawn(argv: list[str], theirs: list[int]) -> int:
    """`argv` with `theirs` as fds 1, 2, 3...: moved out of the way first (a target number may
    be another's source), stdin /dev/null, default SIGPIPE and SIGXFSZ as a shell gives."""
    import fcntl

    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100) for fd in theirs]
    for fd in theirs:
        os.close(fd)
    null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    actions: list[Any] = [(os.POSIX_SPAWN_DUP2, null, 0)]
    actions += [(os.POSIX_SPAWN_DUP2, fd, to) for to, fd in enumerate(high, start=1)]
    try:
        return os.posix_spawnp(
            argv[0], argv, os.environ, file_actions=actions, setsigdef=(SIGPIPE, SIGXFSZ)
        )
    finally:
        for fd in (*high, null):
            os.close(fd)


def _serve_files(sock: _socket.socket) -> None:
    """tree_wire.py's service on `sock`, on a thread of its own."""
    import _thread

    wire: dict[str, Any] = {"__name__": "tree_wire"}
    _load("tree_wire.py", wire)
    serve: Callable[[_socket.socket], None] = wire["serve"]
    _thread.start_new_thread(serve, (sock,))


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def _reap(child: int) -> int | None:
    """Reap every ended process (orphans come to the container's first process); `child`'s
    exit code when it is among them."""
    found = None
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return found
        if pid == 0:
            return found
        if pid == child:
            found = os.waitstatus_to_exitcode(status)


def _kill_all() -> None:
    """SIGKILL every other process of the container (this is its first: none is spared)."""
    try:
        os.kill(-1, SIGKILL)
    except OSError:
        pass
    _reap(-1)


def main(argv: list[str]) -> int:
    """`outside --fds 7,9 -- CLI...` or `inside --count 2 [--files] -- ARGV...`."""
    side, option, value, *rest = [*argv, "", "", ""][: max(len(argv), 3)]
    files = rest[:1] == ["--files"]
    rest = rest[1:] if files else rest
    command = rest[1:] if rest[:1] == ["--"] else rest
    if side == "outside" and option == "--fds" and command:
        return outside([int(fd) for fd in value.split(",") if fd], command)
    if side == "inside" and option == "--count" and value.isdigit() and command:
        return inside(int(value), files, command)
    os.write(2, b"link_ends.py: outside --fds FDS -- CLI... | inside --count N [--files] -- ARGV\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
