"""Time per pytest judgement on a trivial fixture: the jailed judge (bubblewrap) and the same
judge with --no-jail, whose difference is what the jail adds (target: under 50 ms), against
the naive way (`python -m pytest FILE` with plugin autoload and the cache provider on).
Target: median < 0.3 s.

    python scripts/bench_judges.py [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skill_eval.core.work import Work  # noqa: E402
from skill_eval.jail.bubblewrap import problem as jail_problem  # noqa: E402
from skill_eval.judges.pytest_run import run_pytest  # noqa: E402

FIXTURE = """import os

def test_output_mentions_done():
    with open(os.environ["AI_OUTPUT_FILE"], encoding="utf-8") as handle:
        assert "DONE" in handle.read()
"""
TARGET_SECONDS = 0.3


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timings(fn: Callable[[], bool], runs: int) -> tuple[list[float], list[float]]:
    """Wall-clock and child CPU seconds per call (CPU time is less sensitive to a busy box)."""
    fn()  # warm the OS file cache once; not counted
    wall, cpu = [], []
    for _ in range(runs):
        cpu_before, started = _child_cpu(), time.perf_counter()
        if not fn():
            raise SystemExit("a judgement did not pass: the benchmark is broken")
        wall.append(time.perf_counter() - started)
        cpu.append(_child_cpu() - cpu_before)
    return wall, cpu


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-judges-") as tmp:
        fixtures = Path(tmp) / "suite" / "fixtures"
        fixtures.mkdir(parents=True)
        test_file = fixtures / "test_trivial.py"
        test_file.write_text(FIXTURE, encoding="utf-8")
        output_file = Path(tmp) / "output.txt"
        output_file.write_text("DONE", encoding="utf-8")

        def judge() -> bool:
            return run_pytest(test_file, Work("DONE"), 60, fixtures).passed

        def judge_plain() -> bool:
            return run_pytest(test_file, Work("DONE"), 60, fixtures, jail="none").passed

        naive_env = {**os.environ, "AI_OUTPUT_FILE": str(output_file)}
        naive_env.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)

        def naive() -> bool:
            done = subprocess.run(
                [sys.executable, "-m", "pytest", str(test_file), "-q"],
                cwd=fixtures,
                env=naive_env,
                capture_output=True,
            )
            return done.returncode == 0

        if (missing := jail_problem()) is not None:
            raise SystemExit(f"cannot bench the jail: {missing}")
        rows = [
            ("judge [bubblewrap jail]", timings(judge, args.runs)),
            ("judge [--no-jail]", timings(judge_plain, args.runs)),
            ("naive pytest", timings(naive, args.runs)),
        ]
    load = os.getloadavg()[0]
    print(
        f"pytest judgement, trivial fixture, {args.runs} runs each, {os.cpu_count()} CPUs, "
        f"load average {load:.2f}"
    )
    for name, (wall, cpu) in rows:
        print(
            f"  {name:30s} wall median {statistics.median(wall):.3f} s  p90 {p90(wall):.3f} s"
            f"  min {min(wall):.3f} s | CPU median {statistics.median(cpu):.3f} s"
        )
    median = statistics.median(rows[0][1][0])
    added = median - statistics.median(rows[1][1][0])
    print(
        f"  the jail adds {added * 1000:.0f} ms per judgement (target: under 50 ms): "
        f"{'meets' if added < 0.05 else 'MISSES'}"
    )
    verdict = "meets" if median < TARGET_SECONDS else "MISSES"
    print(
        f"  target: wall median < {TARGET_SECONDS} s: {verdict} "
        f"({statistics.median(rows[-1][1][0]) / median:.1f}x faster than naive)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
