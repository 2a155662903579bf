"""bench_attempts.py's last row: the original tool's own 7 task suites (48 tasks; 23 of them
judged by an llm-rubric judge, itself one `claude -p`) with a stand-in `claude` that waits
`latency` seconds and answers (tests/fakes/fake_claude.py: the original reads
`--output-format json`, skill-eval stream-json; both get a judgement in the form their judge
parses), against skill-eval at `--concurrency 16` (issue 29's target: at least 4x faster).

- the original: its `scripts/evaluate.py --standalone` on each suite, one after another (it
  runs a suite's tasks one at a time, each judgement after its task): its serial run;
- skill-eval, the 48 tasks as one suite (the 7 files' tasks, unchanged, in one file) at
  `--concurrency 16`: the target's row; the original on that same file is printed too;
- skill-eval on the 7 suites one after another, each at `--concurrency 16` (no suite has more
  than 7 tasks, so each run's start-up and its two waves, answers then judgements, are paid 7
  times over): for the record.

Both sides: the same skill (`--skill-path`), the candidate alone (the original's standalone
mode; skill-eval's --no-baseline), a fresh state root per run (no judge cache). The original's
code is not part of this repository: `--original DIR` is a checkout of
lanyasheng/auto-improvement-orchestrator-skill; without it the row is skipped.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml
from bench_attempts import SkillEvalRuns

from tests.fakes.fake_claude import install

EVALUATOR = Path("skills/improvement-evaluator")
TARGET = 4.0


def original_run(checkout: Path, suite: Path, skill: Path, state: Path, bin_dir: Path) -> None:
    script = checkout / EVALUATOR / "scripts" / "evaluate.py"
    argv = [sys.executable, str(script), "--standalone", "--task-suite", str(suite)]
    argv += ["--skill-path", str(skill), "--state-root", str(state)]
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', os.defpath)}"}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=checkout)
    if done.returncode != 0:
        raise SystemExit(f"the original tool failed on {suite}: {done.stderr[-1000:]}")


def combined_suite(suites: list[Path], into: Path) -> Path:
    """The 48 tasks of the 7 suites in one file, each task as it is."""
    tasks = []
    for suite in suites:
        tasks += yaml.safe_load(suite.read_text(encoding="utf-8"))["tasks"]
    into.mkdir(parents=True, exist_ok=True)
    path = into / "task_suite.yaml"
    data = {"skill_id": "original-suites", "version": "1.0", "tasks": tasks}
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def bench_original(
    checkout: Path | None, root: Path, skill: Path, latency: float, rounds: int
) -> None:
    print(
        "\nthe original tool's 7 suites (48 tasks, 23 llm-rubric judgements), a stand-in claude of "
        f"{latency:g} s"
    )
    if checkout is None:
        print(
            "  skipped: give --original DIR (a checkout of "
            "lanyasheng/auto-improvement-orchestrator-skill)"
        )
        return
    suites = sorted((checkout / EVALUATOR / "task_suites").glob("*/task_suite.yaml"))
    if len(suites) != 7:
        raise SystemExit(f"{checkout}: expected the original's 7 task suites, found {len(suites)}")
    bin_dir = root / "fake-bin"
    fake = install(bin_dir, latency=latency)
    combined = combined_suite(suites, root / "original-48")
    ours = SkillEvalRuns(root / "se-original", "http://127.0.0.1:9", claude_bin=fake)
    states = iter(range(10**6))

    def original(paths: list[Path]) -> float:
        return timed(
            lambda: [
                original_run(checkout, s, skill, root / f"o-{next(states)}", bin_dir) for s in paths
            ]
        )

    def skill_eval(paths: list[Path]) -> float:
        return timed(lambda: [check(ours.run(s, skill, 16, ())[1]) for s in paths])

    skill_eval([combined])  # warm-up (and `claude --version` once); not counted
    figures: dict[str, list[float]] = {k: [] for k in ("o7", "o1", "s1", "s7")}
    for _ in range(rounds):
        figures["o7"].append(original(suites))
        figures["s1"].append(skill_eval([combined]))
        figures["o1"].append(original([combined]))
        figures["s7"].append(skill_eval(suites))
    median = {k: statistics.median(v) for k, v in figures.items()}
    ratios = [o / s for o, s in zip(figures["o7"], figures["s1"], strict=True)]
    speedup = statistics.median(ratios)
    print(f"  original, the 7 suites one after another (its serial run)  {median['o7']:7.2f} s")
    print(f"  original, the 48 tasks as one suite                       {median['o1']:7.2f} s")
    print(
        f"  skill-eval --concurrency 16, the 48 tasks as one suite     {median['s1']:7.2f} s: "
        f"{speedup:.1f}x faster than the original's serial run "
        f"(target >= {TARGET:g}x: {'met' if speedup >= TARGET else 'MISSED'}); "
        f"{median['o1'] / median['s1']:.1f}x the original on the same file"
    )
    print(
        f"  skill-eval --concurrency 16, the 7 suites one after another {median['s7']:6.2f} s: "
        f"{median['o7'] / median['s7']:.1f}x (each run's start-up and its two waves paid 7 times)"
    )


def check(artifact: dict[str, object]) -> None:
    errors = artifact.get("errors")
    if errors:
        raise SystemExit(f"skill-eval's run on the original's suites had errors: {errors}")
