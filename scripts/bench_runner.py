#!/usr/bin/env python3
"""Runner throughput against the local Messages API.

First the whole process: a real `skill-eval run` subprocess on 7 tasks, each one execution and
one llm-rubric judge call at 300 ms latency (--no-baseline, concurrency 8), against the 0.6 s
lower bound (one execution then one judgement); goal <= 0.9 s. Then 40 tasks x 2 arms,
pass@1, 300 ms latency per request, the anthropic executor at concurrency 1, 8 and 16:
wall time, the latency bound (requests x latency / concurrency) and their ratio (target
<= 1.2 at concurrency 16). Then the same suite through the claude-cli executor at
concurrency 8 (when the claude binary is installed) and its per-attempt overhead.

    python scripts/bench_runner.py [--tasks 40] [--latency 0.3] [--claude-bin PATH]
    python scripts/bench_runner.py --process-only [--repeat 5]
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
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

from skill_eval.engine.conductor import run_evaluation  # noqa: E402
from skill_eval.judges.llm_rubric import TOOL_NAME  # noqa: E402
from skill_eval.plan.run_plan import RunPlan  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropic  # noqa: E402

PROCESS_TASKS = 7


def process_suite(directory: Path) -> tuple[Path, Path]:
    """7 tasks, each judged by one llm-rubric call."""
    suite = {
        "skill_id": "bench",
        "version": "1.0",
        "tasks": [
            {
                "id": f"t{i}",
                "prompt": f"Say ok for task {i}",
                "judge": {"type": "llm-rubric", "rubric": "The answer says ok."},
            }
            for i in range(PROCESS_TASKS)
        ],
    }
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "task_suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    skill = directory / "skill"
    skill.mkdir(exist_ok=True)
    (skill / "SKILL.md").write_text("---\nname: bench\ndescription: b\n---\nAnswer ok.\n")
    return directory / "task_suite.yaml", skill


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def process_run(directory: Path, server: FakeAnthropic, extra: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one `skill-eval run` process, start to exit (CPU time does not
    grow when other processes share the machine; wall time does)."""
    suite, skill = process_suite(directory)
    env = {**os.environ, "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "bench"}
    argv = [
        sys.executable,
        "-m",
        "skill_eval.cli",
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--executor",
        "anthropic",
        "--judge-executor",
        "anthropic",
        "--no-baseline",
        "--concurrency",
        "8",
        "--max-retries",
        "0",
        "-q",
        "--state-root",
        str(directory / "state"),
        *extra,
    ]
    cpu, start = _children_cpu(), time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=directory)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"skill-eval run failed ({done.returncode}): {done.stderr}")
    return wall, _children_cpu() - cpu


def whole_process(latency: float, repeat: int) -> None:
    bound = 2 * latency
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeAnthropic(default="ok", latency=latency) as server,
    ):
        server.set_rules(
            [{"tool_choice_name": TOOL_NAME, "tool_input": {"reasoning": "says ok", "score": 0.9}}]
        )
        runs = [process_run(Path(tmp) / f"r{i}", server, []) for i in range(repeat)]
    walls, cpus = [w for w, _ in runs], [c for _, c in runs]
    sdk_runs = [_import_time("anthropic") for _ in range(repeat)]
    bare_runs = [_import_time("sys") for _ in range(repeat)]
    sdk = statistics.median(w for w, _ in sdk_runs)
    bare = statistics.median(w for w, _ in bare_runs)
    sdk_cpu = statistics.median(c for _, c in sdk_runs) - statistics.median(c for _, c in bare_runs)
    print(
        f"whole process: {PROCESS_TASKS} tasks x (1 execution + 1 judge call) at "
        f"{latency * 1000:.0f} ms, `skill-eval run` subprocess, {repeat} runs"
    )
    print(
        f"  wall median {statistics.median(walls):.2f} s (min {min(walls):.2f}, max "
        f"{max(walls):.2f}); lower bound {bound:.2f} s; goal <= {bound + latency:.2f} s"
    )
    print(
        f"  of which `import anthropic` alone: {sdk - bare:.2f} s (a bare interpreter: "
        f"{bare:.2f} s); the rest of skill-eval's overhead: "
        f"{statistics.median(walls) - bound - sdk:.2f} s"
    )
    cpu = statistics.median(cpus)
    print(
        f"  CPU of the process: median {cpu:.2f} s, of which `import anthropic` "
        f"{sdk_cpu:.2f} s; on an idle machine the wall time is about CPU + the "
        f"{bound:.2f} s bound = {cpu + bound:.2f} s"
    )


def _import_time(module: str) -> tuple[float, float]:
    """Wall and CPU seconds of a fresh interpreter importing `module`."""
    cpu, start = _children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
    return time.perf_counter() - start, _children_cpu() - cpu


def make_suite(directory: Path, tasks: int) -> tuple[Path, Path]:
    suite = {
        "skill_id": "bench",
        "version": "1.0",
        "tasks": [
            {
                "id": f"t{i:02d}",
                "prompt": f"Say ok for task {i}",
                "judge": {"type": "contains", "expected": ["ok"]},
            }
            for i in range(tasks)
        ],
    }
    (directory / "task_suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    skill = directory / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: bench\ndescription: b\n---\nAnswer ok.\n")
    return directory / "task_suite.yaml", skill


def run(
    suite: Path,
    skill: Path,
    state: Path,
    executor: str,
    concurrency: int,
    claude_bin: str | None = None,
) -> tuple[float, dict]:
    plan = RunPlan.from_flags(
        task_suite=str(suite),
        state_root=str(state),
        standalone=True,
        skill_path=str(skill),
        executor=executor,
        concurrency=concurrency,
        claude_bin=claude_bin,
        progress=False,
        max_retries=0,
    )
    start = time.perf_counter()
    outcome = run_evaluation(plan, log=lambda m: None)
    return time.perf_counter() - start, outcome.artifact


def find_claude(explicit: str | None) -> str | None:
    for candidate in (
        explicit,
        os.environ.get("SKILL_EVAL_CLAUDE_BIN"),
        str(REPO / ".tools/claude-cli/node_modules/.bin/claude"),
    ):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--concurrency", type=int, nargs="*", default=[1, 8, 16])
    parser.add_argument("--claude-bin")
    parser.add_argument("--repeat", type=int, default=5, help="whole-process runs")
    parser.add_argument("--process-only", action="store_true", help="only the whole-process figure")
    args = parser.parse_args()
    whole_process(args.latency, args.repeat)
    if args.process_only:
        return 0
    requests = args.tasks * 2
    print(
        f"{args.tasks} tasks x 2 arms, pass@1, {args.latency * 1000:.0f} ms per request, "
        f"{os.cpu_count()} cores"
    )
    print(f"{'executor':<11} {'conc':>4} {'wall s':>8} {'bound s':>8} {'ratio':>6} {'verdict':>8}")
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeAnthropic(default="ok", latency=args.latency) as server,
    ):
        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        os.environ["ANTHROPIC_API_KEY"] = "bench-key"
        suite, skill = make_suite(Path(tmp), args.tasks)
        warm_dir = Path(tmp) / "warm"
        warm_dir.mkdir()
        run(*make_suite(warm_dir, 2), warm_dir / "state", "anthropic", 2)  # imports, first client
        api_walls: dict[int, float] = {}
        for conc in args.concurrency:
            wall, data = run(suite, skill, Path(tmp) / f"state-{conc}", "anthropic", conc)
            api_walls[conc] = wall
            bound = requests * args.latency / conc
            print(
                f"{'anthropic':<11} {conc:>4} {wall:>8.2f} {bound:>8.2f} {wall / bound:>6.2f} "
                f"{data['evaluation']['verdict']:>8}"
            )
        claude = find_claude(args.claude_bin)
        if claude is None:
            print("claude-cli: skipped (no claude binary; run scripts/install_claude_cli.sh)")
            return 0
        conc = 8
        served_before = server.count
        wall, data = run(suite, skill, Path(tmp) / "state-cli", "claude-cli", conc, claude)
        per_attempt = server.count - served_before
        bound = requests * args.latency / conc
        print(
            f"{'claude-cli':<11} {conc:>4} {wall:>8.2f} {bound:>8.2f} {wall / bound:>6.2f} "
            f"{data['evaluation']['verdict']:>8}"
        )
        api = api_walls.get(conc) or run(suite, skill, Path(tmp) / "s8", "anthropic", conc)[0]
        overhead = (wall - api) * conc / requests
        print(
            f"claude-cli overhead over the API executor: {overhead:.2f} s per attempt "
            f"({per_attempt / requests:.1f} requests per attempt)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
