"""Benchmark `skill-eval validate`: wall time of the whole CLI process, and of load_suite alone.

    python scripts/bench_validate.py [SUITE] [--runs N]

SUITE defaults to task_suites/demo/task_suite.yaml, or a generated 50-task suite when the demo
is absent. Prints median and min wall time of N subprocess runs, then in-process load_suite time.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "task_suites" / "demo" / "task_suite.yaml"


def generated_suite(directory: Path, tasks: int = 50) -> Path:
    lines = ['skill_id: "bench"', 'version: "1.0"', "tasks:"]
    for i in range(tasks):
        lines += [
            f'  - id: "task-{i}"',
            f'    prompt: "Write item {i} in the house format."',
            "    judge:",
            '      type: "contains"',
            f'      expected: ["item {i}"]',
            "    timeout_seconds: 60",
        ]
    path = directory / "task_suite.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def cli_command() -> tuple[list[str], str]:
    """How to start the CLI: `python -m skill_eval.cli` when it has a __main__, else the
    console script next to this interpreter, else main() through -c."""
    if importlib.util.find_spec("skill_eval.cli.__main__") is not None:
        return [sys.executable, "-m", "skill_eval.cli"], "python -m skill_eval.cli"
    script = Path(sys.executable).parent / "skill-eval"
    if script.exists() or shutil.which("skill-eval"):
        path = str(script) if script.exists() else str(shutil.which("skill-eval"))
        return [path], "skill-eval console script (no skill_eval/cli/__main__.py)"
    code = "from skill_eval.cli import main; main()"
    return [sys.executable, "-c", code], "python -c main() (no __main__, no console script)"


def time_runs(argv: list[str], runs: int) -> list[float]:
    # Installed packages have bytecode; measure that, not a recompile on every start.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
        times.append(time.perf_counter() - started)
        if done.returncode not in (0, 2):
            sys.exit(f"validate crashed (exit {done.returncode}):\n{done.stderr}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", nargs="?", type=Path)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        suite = args.suite or (DEMO if DEMO.exists() else generated_suite(Path(tmp)))
        base, how = cli_command()
        argv = base + ["validate", str(suite)]
        time_runs(argv, 1)  # warm the OS file cache and write bytecode once
        times = time_runs(argv, args.runs)
        print(f"suite: {suite}")
        print(f"cli:   {how}")
        print(
            f"validate subprocess ({args.runs} runs): median {statistics.median(times):.3f} s, "
            f"min {min(times):.3f} s"
        )
        startup = min(time_runs([sys.executable, "-c", ""], 5))
        print(f"interpreter startup alone: min {startup:.3f} s")

        from skill_eval.errors import SuiteError
        from skill_eval.inputs.suite import load_suite

        loads = []
        for _ in range(max(args.runs, 20)):
            started = time.perf_counter()
            try:
                load_suite(suite)
            except SuiteError:
                pass
            loads.append(time.perf_counter() - started)
        print(
            f"in-process load_suite: median {statistics.median(loads) * 1000:.2f} ms, "
            f"min {min(loads) * 1000:.2f} ms"
        )


if __name__ == "__main__":
    main()
