"""What the jail (#28) adds, per agent attempt and per pytest judgement (target: under 50 ms
each): medians of N runs, the jailed and the unjailed version in turns (a busy machine slows
both alike), the added time the median of the paired differences:

1. the jail alone: `/bin/true` in a JailedCommand (bubblewrap, the holder, the workspace and
   HOME tmpfs, seed, run, copy-out, release) vs a plain subprocess, and vs the same steps
   unjailed (`--no-jail`);
2. an agent attempt: the real Claude Code CLI (the one claude-agent-sdk bundles) against the
   loopback Messages API (tests/fakes), through the claude-cli executor jailed vs --no-jail
   (the same attempt, the model API forwarded by the harness's proxy in the jailed case);
3. a pytest judgement: jailed vs --no-jail (scripts/bench_judges.py's measurement);

each for every provider of `--jail` that can run here (by default every isolating one the
registry holds: bubblewrap, the container provider (Podman, #40) and docker (#54) side by
side; the 50 ms target is bubblewrap's: a container costs its runtime's start, and docker's
jail a relay over the container's stdio besides).

    python scripts/bench_jail.py [--runs 20] [--attempt-runs 10] [--jail bubblewrap,docker]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_judges import FIXTURE  # noqa: E402

from skill_eval.core.model import ExecutionRequest, Task  # noqa: E402
from skill_eval.core.work import Work  # noqa: E402
from skill_eval.core.workspace import AttemptWorkspace  # noqa: E402
from skill_eval.executors.claude.binary import bundled_cli  # noqa: E402
from skill_eval.executors.claude.config import ClaudeCliConfig  # noqa: E402
from skill_eval.executors.claude.executor import ClaudeCodeExecutor  # noqa: E402
from skill_eval.executors.claude.launch import AGENT_LIMITS, COPY_CAPS  # noqa: E402
from skill_eval.jail import JailKind, JailUnavailable  # noqa: E402
from skill_eval.jail.providers import (
    REGISTRY,  # noqa: E402
    require,  # noqa: E402
)
from skill_eval.jail.session import JailedCommand  # noqa: E402
from skill_eval.judges.pytest_judge import run_pytest  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropic  # noqa: E402

TARGET = 0.050  # seconds the jail may add (bubblewrap's: a container runtime starts slower)
TARGETED = "bubblewrap"


@dataclass(frozen=True)
class Paired:
    """Wall seconds of a jailed and an unjailed version of one thing, run in turns (so that a
    busy machine slows both alike): each one's median, and the median of the differences."""

    jailed: float
    plain: float
    added: float


def paired(jailed: Callable[[], object], plain: Callable[[], object], runs: int) -> Paired:
    """(No CPU figure: what runs in a jail is reaped by the system's init, not by us, since
    bwrap passes the exit status over an eventfd, so RUSAGE_CHILDREN never sees it.)"""
    jailed(), plain()  # warm the file cache (and the CLI's first start) once; not counted
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        for fn, into in ((jailed, times[0]), (plain, times[1])):
            started = time.perf_counter()
            fn()
            into.append(time.perf_counter() - started)
    added = statistics.median(a - b for a, b in zip(*times, strict=True))
    return Paired(statistics.median(times[0]), statistics.median(times[1]), added)


def true_in(kind: JailKind, root: Path) -> Callable[[], object]:
    """One JailedCommand life of `/bin/true`: start, seed (empty), run, copy out, release."""
    seed = root / "seed"
    seed.mkdir(exist_ok=True)

    def once() -> object:
        with JailedCommand(kind, AGENT_LIMITS) as jail:
            jail.start(["/bin/true"], {"PATH": "/usr/bin:/bin"})
            jail.seed(seed)
            ended = jail.run(b"", 30, lambda line: True)
            jail.collect(root / "out", COPY_CAPS)
        if ended.code != 0:
            raise SystemExit(f"/bin/true in a {kind} jail ended {ended}: the benchmark is broken")
        return ended

    return once


def attempt_with(binary: str, server: FakeAnthropic, root: Path, jail: str) -> Callable[[], object]:
    executor = ClaudeCodeExecutor(
        ClaudeCliConfig(
            claude_bin=binary,
            base_url=server.base_url,
            env={"ANTHROPIC_API_KEY": "sk-bench"},
            jail=jail,
            claude_max_retries=0,
        )
    )
    task = Task(id="t", prompt="Say PONG.", judge={"type": "contains", "expected": ["PONG"]})

    def once() -> object:
        ws = AttemptWorkspace.create(root)
        result = executor.run(ExecutionRequest(task, "baseline", 0, None, 120, ws.path))
        ws.finish(keep=False)
        if result.error is not None or result.output != "PONG":
            raise SystemExit(f"an attempt ({jail}) failed: {result.error}")
        return result

    return once


def judgement(test_file: Path, fixtures: Path, jail: JailKind) -> Callable[[], object]:
    def once() -> object:
        if not run_pytest(test_file, Work("DONE"), 60, fixtures, jail=jail).passed:
            raise SystemExit("a judgement did not pass: the benchmark is broken")
        return True

    return once


def row(name: str, figures: Paired, jail: str) -> str:
    verdict = "meets" if figures.added < TARGET else "MISSES"
    target = f" ({verdict} the {TARGET * 1000:.0f} ms target)" if jail == TARGETED else ""
    return (
        f"  {name:36s} jailed {figures.jailed * 1000:6.1f} ms, unjailed "
        f"{figures.plain * 1000:6.1f} ms: the jail adds {figures.added * 1000:6.1f} ms{target}"
    )


def bench(jail: str, root: Path, binary: str | None, args: argparse.Namespace) -> None:
    """The rows of one provider: what its jail costs an attempt and a judgement."""
    print(f"{jail}:")
    bare = paired(true_in(jail, root), lambda: subprocess.run(["/bin/true"], check=True), args.runs)
    print(row("/bin/true vs a plain subprocess", bare, jail))
    steps = paired(true_in(jail, root), true_in("none", root), args.runs)
    print(row("/bin/true vs the same steps unjailed", steps, jail))
    if binary is None:
        print("  agent attempt: skipped (no claude CLI: pip install -e '.[agent]')")
    else:
        with FakeAnthropic(default="PONG") as server:
            attempt = paired(
                attempt_with(binary, server, root, jail),
                attempt_with(binary, server, root, "none"),
                args.attempt_runs,
            )
        print(row("agent attempt (real CLI, fake API)", attempt, jail))
    fixtures = root / "suite" / "fixtures"
    fixtures.mkdir(parents=True, exist_ok=True)
    test_file = fixtures / "test_trivial.py"
    test_file.write_text(FIXTURE, encoding="utf-8")
    judged = paired(
        judgement(test_file, fixtures, jail), judgement(test_file, fixtures, "none"), args.runs
    )
    print(row("pytest judgement (trivial fixture)", judged, jail))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs of the jail and the judge")
    parser.add_argument("--attempt-runs", type=int, default=10, help="runs of the real CLI")
    isolating = [n for n in REGISTRY.names() if (p := REGISTRY.get(n)) and p.isolated]
    parser.add_argument(
        "--jail", default=",".join(isolating), help="the providers to bench, side by side"
    )
    args = parser.parse_args()
    binary = os.environ.get("SKILL_EVAL_CLAUDE_BIN") or bundled_cli()
    print(
        f"medians of N runs, jailed and unjailed in turns, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.2f} (N = {args.runs}; {args.attempt_runs} for the real CLI)"
    )
    for jail in args.jail.split(","):
        try:
            require(jail)
        except JailUnavailable as exc:
            print(f"{jail}: skipped ({exc})")
            continue
        with tempfile.TemporaryDirectory(prefix="bench-jail-") as tmp:
            bench(jail, Path(tmp), binary, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
