"""The jail's first process for an agent attempt: it holds the jail open around one command.

Run inside the jail as `python -I -S holder.py --fds C,I,O,E [--forward PORT FD] [--confine]
-- ARGV...`, with fd C a control socket to the harness, I the command's stdin, O its stdout
and E its stderr.
Protocol on the control socket, one line each: holder `ready` -> harness `go` -> holder runs
ARGV -> (harness `stop`, or the command ends) -> holder kills every other process of the jail
and says `done <exit code|killed>` -> harness reads the workspace through /proc -> harness
`release` (or closes the socket) -> holder exits and the jail is gone.

Why a holder: the workspace is a size-capped tmpfs that exists only while a process of the
jail's mount namespace lives; the harness copies the final tree out after everything the agent
started is dead, so the copy sees a tree nobody changes. `--forward` serves the model API
inside a jail without a network: each connection to 127.0.0.1:PORT is passed to the harness
over the socket FD, and the harness (which holds the credentials) answers it. `--confine`
starts the command in a Landlock domain of its own (confine.py): it reaches the forwarded API
port and no other TCP, and neither it nor anything it starts can signal or trace the holder.

Only the interpreter's own C modules (`_socket`, `_thread`, `select`, `posix`), no site
packages (-S): not `subprocess` (posix_spawn starts the command), nor `socket`, `signal` or
`threading`, whose enums and imports cost more than the rest of its start-up
(11 ms of CPU instead of 17): every attempt pays for it, and the harness waits for its
`ready`. `_socket` makes its sockets, and `_accept` its connections, close-on-exec, as
`socket` does: none reaches the command.
"""

from __future__ import annotations

import _socket
import _thread
import os
import select
import sys
import time

TYPE_CHECKING = False  # (typing is not imported: the holder starts in a few milliseconds)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

SIGKILL = 9  # fixed by POSIX; `signal` would cost more to import than the rest


def _serve(port: int, channel: _socket.socket) -> None:
    """Accept TCP connections on 127.0.0.1:port and hand each one to the harness over
    `channel` (SCM_RIGHTS): the harness answers it; no path to the API exists in the jail."""
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)

    def accept() -> None:
        while True:
            client, _ = listener._accept()  # type: ignore[attr-defined]  # an fd; typeshed omits it
            rights = client.to_bytes(4, sys.byteorder, signed=True)  # one C int
            try:
                channel.sendmsg([b"c"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
            except OSError:
                return
            finally:
                os.close(client)

    _thread.start_new_thread(accept, ())  # dies with the holder, as a daemon thread would


def _others() -> list[int]:
    me = os.getpid()
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]


def _kill_the_rest() -> None:
    """SIGKILL every process of the jail but its init and this one, until none is left."""
    deadline = time.monotonic() + 5
    while True:
        try:
            os.kill(-1, SIGKILL)
        except ProcessLookupError:
            pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
        if not _others() or time.monotonic() > deadline:
            return
        time.sleep(0.005)


def _shut(fd: int) -> None:
    """EOF for the harness on a socket, however many copies of it are open."""
    try:
        _socket.socket(fileno=os.dup(fd)).shutdown(_socket.SHUT_WR)
    except OSError:
        pass
    os.close(fd)


def _line(control: _socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = control.recv(1)
        if not chunk:
            return ""
        data += chunk
    return data.decode().strip()


def _spawn(command: list[str], stdin: int, stdout: int, stderr: int) -> int:
    """Start `command` with these as its fds 0-2 and no other fd of ours (the control socket
    and the API channel are the harness's alone); its pid."""
    actions = [(os.POSIX_SPAWN_DUP2, fd, to) for fd, to in ((stdin, 0), (stdout, 1), (stderr, 2))]
    return os.posix_spawnp(command[0], command, os.environ, file_actions=actions)


def _confined_spawner(port: int | None) -> Callable[[list[str], int, int, int], int]:
    """`_spawn`, the command in a Landlock domain of its own (confine.py, beside this file):
    TCP only to `port`. Loaded before the harness says go (while it seeds the workspace); the
    command is forked, since the domain must be the child's alone, never the holder's."""
    import ctypes

    # Run as a script, not imported: importlib.util alone would double the holder's start-up.
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "confine.py")
    confine: dict[str, Any] = {"__name__": "confine"}
    with open(path, "rb") as source:
        exec(compile(source.read(), path, "exec"), confine)
    libc = ctypes.CDLL(None, use_errno=True)
    version = confine["abi"](libc)

    def spawn(command: list[str], stdin: int, stdout: int, stderr: int) -> int:
        if not version:
            raise OSError(95, "this kernel has no Landlock")  # the command never runs
        pid = os.fork()
        if pid:
            return pid
        try:  # the child: nothing here may return into the holder's code
            for fd, to in ((stdin, 0), (stdout, 1), (stderr, 2)):
                os.dup2(fd, to)
            confine["restrict"](libc, version, (port,) if port is not None else ())
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(2, f"skill-eval: cannot run {command[0]}: {exc.strerror}\n".encode())
        os._exit(127)

    return spawn


def main(argv: list[str]) -> int:
    passed = [int(fd) for fd in argv[1].split(",")]
    ctl, stdin, stdout, stderr = passed
    argv = argv[2:]
    control = _socket.socket(fileno=ctl)
    port = None
    if argv[:1] == ["--forward"]:
        port = int(argv[1])
        passed.append(int(argv[2]))
        _serve(port, _socket.socket(fileno=int(argv[2])))
        argv = argv[3:]
    confined = argv[:1] == ["--confine"]
    argv = argv[1:] if confined else argv
    for fd in passed:  # bwrap passed them inheritable: none may reach the command as it is
        os.set_inheritable(fd, False)
    command = argv[1:] if argv[:1] == ["--"] else argv
    control.sendall(b"ready\n")
    # Loaded while the harness caps the jail and seeds its workspace (ctypes: ~7 ms)
    spawn = _confined_spawner(port) if confined else _spawn
    if _line(control) != "go":
        return 0
    try:
        pid = spawn(command, stdin, stdout, stderr)
    except OSError as exc:  # no such program, not executable: what a shell would say
        os.write(stderr, f"skill-eval: cannot run {command[0]}: {exc.strerror}\n".encode())
        pid = None
    # Only the command reads its stdin. Its stdout and stderr (sockets) end when the holder
    # shuts them, after the command ended and the rest died: a container runtime keeps
    # copies of them open, so their last close would never come.
    os.close(stdin)
    code = "127"
    if pid is not None:
        ended = os.pidfd_open(pid)  # readable once the command has ended
        code = "killed"
        while True:
            ready, _, _ = select.select([control.fileno(), ended], [], [])
            if ended in ready:
                code = str(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
                break
            if _line(control) in ("stop", ""):
                break
    _kill_the_rest()
    for fd in (stdout, stderr):
        _shut(fd)
    control.sendall(f"done {code}\n".encode())
    _line(control)  # `release`, or the harness closing the socket
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
