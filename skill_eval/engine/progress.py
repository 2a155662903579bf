"""Progress on stderr: a rich progress bar on a terminal, plain periodic lines otherwise (a log
file, CI). rich is imported only when a bar is drawn."""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import IO, Any

from ..core.model import Attempt


class Progress:
    def __init__(
        self,
        totals: Mapping[str, int],
        stream: IO[str] | None = None,
        interval: float = 10.0,
        level: Callable[[], tuple[int, int] | None] | None = None,
    ) -> None:
        self.totals = dict(totals)
        self.done = dict.fromkeys(totals, 0)
        self.errors = 0
        self.cost = 0.0
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval
        # When the last line was written: never, so the first line comes at once. (0.0 would
        # hold it back on a machine up for less than `interval`: monotonic() counts from boot.)
        self._last = -math.inf
        self._lock = threading.Lock()
        self._bar: Any = None  # (rich Progress, task id) once drawn
        # (calls at once now, ceiling) under adaptive concurrency, shown on the line
        self.level = level
        self._batch_shown = ""

    def already(self, attempts: Iterable[Attempt]) -> None:
        """Count attempts finished before this process (resumed or from the cache)."""
        with self._lock:
            for attempt in attempts:
                self.done[attempt.arm] = self.done.get(attempt.arm, 0) + 1

    def __call__(self, attempt: Attempt) -> None:
        with self._lock:
            self.done[attempt.arm] = self.done.get(attempt.arm, 0) + 1
            self.errors += attempt.status == "error"
            self.cost += attempt.cost_usd
            finished = sum(self.done.values()) >= sum(self.totals.values())
            now = time.monotonic()
            if self.tty:
                self._draw(finished)
            elif finished or now - self._last >= self.interval:
                self._last = now
                self.stream.write(self.line() + "\n")
                self.stream.flush()

    def batch(self, counts: Any) -> None:
        """A Message Batch's counts at one poll (executors/batches.BatchCounts): a line when
        they change, at most one per interval while they do not."""
        text = counts.describe()
        with self._lock:
            now = time.monotonic()
            if text == self._batch_shown and now - self._last < self.interval:
                return
            self._batch_shown, self._last = text, now
            self.stream.write(text + "\n")
            self.stream.flush()

    def _draw(self, finished: bool) -> None:
        """Redraw the rich bar. No refresh thread and no redirection of stdout/stderr: it is
        drawn on each finished attempt only, so nothing lingers when a run is interrupted."""
        if self._bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as RichProgress

            bar = RichProgress(
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=Console(file=self.stream, force_terminal=True, highlight=False),
                auto_refresh=False,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            bar.start()
            self._bar = (bar, bar.add_task("", total=sum(self.totals.values())))
        bar, task = self._bar
        bar.update(task, completed=sum(self.done.values()), description=self.summary())
        bar.refresh()
        if finished:
            bar.stop()

    def close(self) -> None:
        """Stop an unfinished bar (an interrupted run): its line ends and the cursor shows."""
        with self._lock:
            if self._bar is not None and self._bar[0].live.is_started:
                self._bar[0].stop()

    def summary(self) -> str:
        """Per arm counts, errors and cost (the text beside the bar)."""
        arms = "  ".join(f"{arm} {self.done[arm]}/{total}" for arm, total in self.totals.items())
        level = self.level() if self.level is not None else None
        shown = f"  concurrency {level[0]}/{level[1]}" if level else ""
        return f"{arms}  errors {self.errors}  cost ${self.cost:.4f}{shown}"

    def line(self) -> str:
        """The plain line written when stderr is not a terminal."""
        done, total = sum(self.done.values()), sum(self.totals.values())
        width = 20
        filled = int(width * done / total) if total else width
        bar = "#" * filled + "-" * (width - filled)
        return f"[{bar}] {self.summary()}"
