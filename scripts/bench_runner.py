#!/usr/bin/env python3
"""Runner throughput against the local Messages API.

40 tasks x 2 arms, pass@1, 300 ms latency per request, the anthropic executor at concurrency
1, 8 and 16: wall time, the latency bound (requests x latency / concurrency) and their ratio
(target <= 1.2 at concurrency 16). Then the same suite through the claude-cli executor at
concurrency 8 (when the claude binary is installed) and its per-attempt overhead.

    python scripts/bench_runner.py [--tasks 40] [--latency 0.3] [--claude-bin PATH]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

from skill_eval.conductor import run_evaluation  # noqa: E402
from skill_eval.options import RunOptions  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropic  # noqa: E402


def make_suite(directory: Path, tasks: int) -> tuple[Path, Path]:
    suite = {"skill_id": "bench", "version": "1.0", "tasks": [
        {"id": f"t{i:02d}", "prompt": f"Say ok for task {i}",
         "judge": {"type": "contains", "expected": ["ok"]}} for i in range(tasks)]}
    (directory / "task_suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    skill = directory / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: bench\ndescription: b\n---\nAnswer ok.\n")
    return directory / "task_suite.yaml", skill


def run(suite: Path, skill: Path, state: Path, executor: str, concurrency: int,
        claude_bin: str | None = None) -> tuple[float, dict]:
    opts = RunOptions(task_suite=str(suite), state_root=str(state), standalone=True,
                      skill_path=str(skill), executor=executor, concurrency=concurrency,
                      claude_bin=claude_bin, progress=False, max_retries=0)
    start = time.perf_counter()
    outcome = run_evaluation(opts, log=lambda m: None)
    return time.perf_counter() - start, outcome.artifact


def find_claude(explicit: str | None) -> str | None:
    for candidate in (explicit, os.environ.get("SKILL_EVAL_CLAUDE_BIN"),
                      str(REPO / ".tools/claude-cli/node_modules/.bin/claude")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--concurrency", type=int, nargs="*", default=[1, 8, 16])
    parser.add_argument("--claude-bin")
    args = parser.parse_args()
    requests = args.tasks * 2
    print(f"{args.tasks} tasks x 2 arms, pass@1, {args.latency * 1000:.0f} ms per request, "
          f"{os.cpu_count()} cores")
    print(f"{'executor':<11} {'conc':>4} {'wall s':>8} {'bound s':>8} {'ratio':>6} "
          f"{'verdict':>8}")
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic(default="ok",
                                                             latency=args.latency) as server:
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
            print(f"{'anthropic':<11} {conc:>4} {wall:>8.2f} {bound:>8.2f} {wall / bound:>6.2f} "
                  f"{data['evaluation']['verdict']:>8}")
        claude = find_claude(args.claude_bin)
        if claude is None:
            print("claude-cli: skipped (no claude binary; run scripts/install_claude_cli.sh)")
            return 0
        conc = 8
        served_before = server.count
        wall, data = run(suite, skill, Path(tmp) / "state-cli", "claude-cli", conc, claude)
        per_attempt = server.count - served_before
        bound = requests * args.latency / conc
        print(f"{'claude-cli':<11} {conc:>4} {wall:>8.2f} {bound:>8.2f} {wall / bound:>6.2f} "
              f"{data['evaluation']['verdict']:>8}")
        api = api_walls.get(conc) or run(suite, skill, Path(tmp) / "s8", "anthropic", conc)[0]
        overhead = (wall - api) * conc / requests
        print(f"claude-cli overhead over the API executor: {overhead:.2f} s per attempt "
              f"({per_attempt / requests:.1f} requests per attempt)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
