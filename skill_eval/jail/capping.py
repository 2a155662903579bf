"""A jail's caps put on it without forking the harness: its cgroup and rlimits set on the jail's
own processes (bwrap, its pid 1, the holder) while they start, and checked complete before the
holder starts the command, which inherits both.

Why not a preexec function that joins the cgroup between fork and exec: forking the harness
(10-20 ms with its threads and memory) and the cgroup migration (an RCU grace period, about
10 ms on cgroup v1) would both sit on every attempt's path. Here the migration runs on a
thread while the holder's interpreter starts. `finish` (once the holder said `ready`, before
the harness says `go`) moves whatever the thread had not, so the command never runs uncapped.

    capping = Capping(bwrap.pid, cgroup, limits)   # right after starting bwrap
    ...                                            # the holder says ready
    capping.finish()                               # JailBroken: a process could not be capped
"""

from __future__ import annotations

import threading

from . import Limits
from .cgroup import Cgroup
from .ended import JailBroken
from .pipes import process_tree
from .process import limit_running

POLL = 0.002  # seconds between looks at the jail's process tree while it starts


class Capping:
    """Caps the process tree under `root` (a started bwrap) as it grows, until `finish`."""

    def __init__(self, root: int, cgroup: Cgroup | None, limits: Limits) -> None:
        self.root, self.cgroup, self.limits = root, cgroup, limits
        self._capped: set[int] = set()
        self._error: OSError | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._early, daemon=True)
        self._thread.start()

    def _early(self) -> None:
        try:
            while not self._stop.is_set():
                self._cap_new()
                self._stop.wait(POLL)
        except OSError as exc:
            self._error = exc

    def _cap_new(self) -> None:
        for pid in process_tree(self.root):
            if pid in self._capped:
                continue
            try:
                if self.cgroup is not None:
                    self.cgroup.adopt([pid])
                limit_running([pid], self.limits)
            except ProcessLookupError:  # it ended (bwrap's short-lived helpers): nothing to cap
                continue
            self._capped.add(pid)

    def stop(self) -> None:
        """Stop the thread (the jail failed to start)."""
        self._stop.set()
        self._thread.join()

    def finish(self) -> None:
        """Cap every process of the tree (call before the command starts). JailBroken when one
        could not be: the jail must not run the command."""
        self.stop()
        try:
            if self._error is not None:
                raise self._error
            self._cap_new()
        except OSError as exc:
            raise JailBroken(f"cannot cap the jail's processes: {exc}") from exc
