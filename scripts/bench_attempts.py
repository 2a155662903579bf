"""What an attempt costs in skill-eval against what the same Claude Code call costs bare (issue
29): side by side in one run, against the loopback Messages API (tests/fakes) answering every
request in `--latency` seconds (0.3 s, as the issue measured), one at a time and 4 and 8 at a
time, and the issue's targets checked.

The bare side runs the CLI that skill-eval runs (the one claude-agent-sdk bundles), with what
skill-eval gives it: `claude -p --output-format stream-json --verbose` and the flags the
claude-cli executor passes for that attempt (asked of the executor itself), the same isolation
environment (a fresh HOME and config dir, ISOLATION_ENV, the API's URL and key), the prompt on
stdin, in a fresh folder holding what skill-eval's workspace holds (the installed skill); N such
calls through a pool of C threads. A trigger call is run as skill-creator's run_eval.py runs
one (anthropics/skills, skills/skill-creator/scripts/run_eval.py): with
`--include-partial-messages`, killed as soon as the stream shows the skill's invocation, the
first other tool call, or the end of the first reply. The skill-eval side is one whole
`skill-eval run` process (--executor claude-cli, each attempt in its jail, the model API through
the jail's proxy, --no-baseline, the suite's judges: none of them calls a model) from its start
to its exit, with a state root of its own that holds only `claude --version` as a user's would.
Every figure is the median of `--rounds` runs of both sides in turns; the ratio is the median of
the paired ratios (a busy machine slows both alike).

    python scripts/bench_attempts.py [--rounds 3] [--only text,agent,trigger,original]
        [--concurrency 1,4,8] [--original DIR]

`--original DIR` (a checkout of lanyasheng/auto-improvement-orchestrator-skill) adds the
original tool's 7 suites with a stand-in `claude` of `--latency` seconds (bench_original.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import yaml  # noqa: E402

from skill_eval.core.model import ExecutionRequest  # noqa: E402
from skill_eval.executors.base import compose_prompt, env_lookup  # noqa: E402
from skill_eval.executors.claude.binary import bundled_cli  # noqa: E402
from skill_eval.executors.claude.config import ClaudeCliConfig  # noqa: E402
from skill_eval.executors.claude.environment import child_env  # noqa: E402
from skill_eval.executors.claude.executor import ClaudeCodeExecutor  # noqa: E402
from skill_eval.inputs.suite import load_suite  # noqa: E402
from skill_eval.jail.bubblewrap import problem as jail_problem  # noqa: E402
from skill_eval.skills.install import install_skill  # noqa: E402
from skill_eval.skills.load import load_skill  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropic  # noqa: E402

SKILL = "bench-skill"
DESCRIPTION = "BENCH-DESC-3e1f answers benchmark questions"
AGENT_MARK, TRIGGER_MARK = "AGENT-TASK", "TRIGGER-QUERY"
# The fake's script: an agent task invokes the skill, writes a file and answers (3 requests);
# a query that should trigger gets the skill invoked; anything else a one-turn answer.
RULES = [
    {
        "name": "agent",
        "request_contains": AGENT_MARK,
        "steps": [
            {"tool_use": {"name": "Skill", "input": {"skill": SKILL}}},
            {"tool_use": {"name": "Write", "input": {"file_path": "{cwd}/out.md", "content": "x"}}},
            {"text": "Done: out.md is written."},
        ],
    },
    {
        "name": "trigger",
        "request_contains": [DESCRIPTION, TRIGGER_MARK],
        "steps": [{"tool_use": {"name": "Skill", "input": {"skill": SKILL}}}, "Done."],
    },
]
DEFAULT = "PONG"
TEXT_TARGET = 1.15  # skill-eval's wall time over the bare calls', one and 4 at a time
SYSTEM_FILE = ".skill-eval-system-prompt.md"


@dataclass(frozen=True)
class Workload:
    """One kind of attempt: the suite skill-eval runs (with `flags` beyond the common ones),
    the bare calls that are its equivalent, and what each bare call must show."""

    name: str
    suite: Path
    flags: tuple[str, ...]
    calls: tuple[BareCall, ...]


@dataclass(frozen=True)
class BareCall:
    """One bare `claude -p`: flags after `-p --output-format stream-json --verbose`, the prompt
    (stdin), the system prompt (a file, as skill-eval passes it), whether the skill is installed
    in its folder, and run_eval's early stop (trigger calls) with the outcome expected."""

    args: tuple[str, ...]
    prompt: str
    system: str | None
    installed: bool
    run_eval: bool = False
    expect_trigger: bool | None = None


def write_skill(root: Path) -> Path:
    folder = root / SKILL
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {SKILL}\ndescription: {DESCRIPTION}\n---\n# {SKILL}\nAnswer briefly.\n",
        encoding="utf-8",
    )
    return folder


def write_suite(path: Path, tasks: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"skill_id": SKILL, "version": "1.0", "tasks": tasks}
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def workloads(root: Path, binary: str, sizes: dict[str, int], queries: int) -> list[Workload]:
    text = [
        {
            "id": f"t{i}",
            "prompt": f"Say PONG ({i}).",
            "judge": {"type": "contains", "expected": ["PONG"]},
        }
        for i in range(sizes["text"])
    ]
    agent = [
        {
            "id": f"a{i}",
            "prompt": f"{AGENT_MARK} {i}: write out.md.",
            "allowed_tools": ["Skill", "Write"],
            "max_turns": 8,
            "judge": {"type": "file-exists", "paths": ["out.md"]},
        }
        for i in range(sizes["agent"])
    ]
    trigger = [
        {
            "id": f"q{i}",
            "query": f"{TRIGGER_MARK} {i}" if i % 2 else f"Question {i}?",
            "should_trigger": bool(i % 2),
        }
        for i in range(queries)
    ]
    return [
        workload("text", write_suite(root / "text" / "task_suite.yaml", text), (), binary, root),
        workload(
            "agent",
            write_suite(root / "agent" / "task_suite.yaml", agent),
            ("--skill-mode", "installed"),
            binary,
            root,
        ),
        workload(
            "trigger",
            write_suite(root / "trigger" / "task_suite.yaml", trigger),
            ("--samples", str(sizes["samples"])),
            binary,
            root,
            samples=sizes["samples"],
        ),
    ]


def workload(
    name: str, suite_path: Path, flags: tuple[str, ...], binary: str, root: Path, samples: int = 1
) -> Workload:
    """The bare calls of a suite: each attempt's flags, prompt and system prompt as the
    claude-cli executor builds them (its own `arguments` and `compose_prompt`)."""
    suite, skill = load_suite(suite_path), load_skill(root / "skill" / SKILL)
    mode = "installed" if "installed" in flags else "system"
    executor = ClaudeCodeExecutor(ClaudeCliConfig(claude_bin=binary, skill_mode=mode))
    calls = []
    for task in suite.tasks:
        request = ExecutionRequest(task, "candidate", 0, skill, 120, root)
        args = executor.arguments(executor.tool_plan(request), request)
        system, prompt = compose_prompt(skill, task.prompt, request.settings.mode(mode))
        trigger = task.should_trigger if task.query is not None else None
        if trigger is not None:
            args = (*args, "--include-partial-messages")  # run_eval's flag, for its early stop
        call = BareCall(args, prompt, system, request.settings.mode(mode) == "installed")
        calls += [
            BareCall(
                call.args, call.prompt, call.system, call.installed, trigger is not None, trigger
            )
        ] * samples
    return Workload(name, suite_path, flags, tuple(calls))


# -- the bare side -------------------------------------------------------------------------


def run_eval_verdict(event: dict[str, Any], state: dict[str, str]) -> bool | None:
    """run_eval.py's early detection on one stream event: True/False once it would return
    (triggered or not), None to read on. `state` holds the pending tool and its input."""
    if event.get("type") == "stream_event":
        inner = event.get("event") or {}
        kind = inner.get("type")
        if (
            kind == "content_block_start"
            and (inner.get("content_block") or {}).get("type") == "tool_use"
        ):
            name = inner["content_block"].get("name", "")
            if name not in ("Skill", "Read"):
                return False
            state.update(tool=name, input="")
        elif kind == "content_block_delta" and state.get("tool"):
            state["input"] += (inner.get("delta") or {}).get("partial_json", "")
            if SKILL in state["input"]:
                return True
        elif kind in ("content_block_stop", "message_stop"):
            if state.get("tool"):
                return SKILL in state["input"]
            if kind == "message_stop":
                return False
    elif event.get("type") == "result":
        return False
    return None


def bare_call(binary: str, call: BareCall, skill: Path, base_url: str, scratch: Path) -> None:
    """One bare call, in a fresh HOME and folder; raises SystemExit when it did not work."""
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        (home / ".claude").mkdir(parents=True)
        work.mkdir()
        if call.installed:
            install_skill(load_skill(skill), work)
        argv = [binary, "-p", "--output-format", "stream-json", "--verbose", *call.args]
        if call.system is not None:
            (home / SYSTEM_FILE).write_text(call.system, encoding="utf-8")
            argv += ["--append-system-prompt-file", str(home / SYSTEM_FILE)]
        lookup = env_lookup({"ANTHROPIC_API_KEY": "sk-bench"})
        env = child_env(str(home), lookup, max_retries=5, base_url=base_url)
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=work,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(call.prompt.encode("utf-8"))
        proc.stdin.close()
        verdict, final, state = None, None, {}
        for line in proc.stdout:
            event = json.loads(line) if line.startswith(b"{") else {}
            final = event if event.get("type") == "result" else final
            if call.run_eval and (verdict := run_eval_verdict(event, state)) is not None:
                proc.kill()  # as run_eval does: it has its answer
                break
        proc.stdout.close()
        proc.wait()
        if call.run_eval:
            if verdict != call.expect_trigger:
                raise SystemExit(f"a bare trigger call gave {verdict}: the benchmark is broken")
        elif final is None or final.get("is_error"):
            raise SystemExit(f"a bare call failed ({final}): the benchmark is broken")
        elif call.installed and not (work / "out.md").is_file():
            raise SystemExit("a bare agent call wrote no out.md: the benchmark is broken")


def bare_batch(
    binary: str, load: Workload, skill: Path, base_url: str, scratch: Path, at_once: int
) -> float:
    started = time.perf_counter()
    with ThreadPoolExecutor(at_once) as pool:
        list(pool.map(lambda c: bare_call(binary, c, skill, base_url, scratch), load.calls))
    return time.perf_counter() - started


# -- the skill-eval side -------------------------------------------------------------------


def skill_eval_command() -> list[str]:
    """The console script installed beside this interpreter (what a user runs)."""
    script = Path(sys.executable).parent / "skill-eval"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "skill_eval.cli"]


@dataclass
class SkillEvalRuns:
    """`skill-eval run` processes against one server, each with a state root of its own that
    holds the `claude --version` of the binary (remembered per binary, as a user's is)."""

    root: Path
    base_url: str
    claude_bin: str | None = None
    runs: int = 0

    def run(
        self, suite: Path, skill: Path, at_once: int, flags: Sequence[str]
    ) -> tuple[float, dict[str, Any]]:
        self.runs += 1
        state = self.root / f"state-{self.runs}"
        state.mkdir(parents=True)
        versions = self.root / "claude-versions.json"
        if versions.is_file():
            shutil.copy(versions, state / versions.name)
        argv = [
            *skill_eval_command(),
            "run",
            "--task-suite",
            str(suite),
            "--skill-path",
            str(skill),
            "--no-baseline",
            "--executor",
            "claude-cli",
            "--concurrency",
            str(at_once),
            "--state-root",
            str(state),
            "-q",
            *(["--claude-bin", self.claude_bin] if self.claude_bin else []),
            *flags,
        ]
        home = self.root / "home"
        home.mkdir(exist_ok=True)
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(home),
            "ANTHROPIC_API_KEY": "sk-bench",
            "ANTHROPIC_BASE_URL": self.base_url,
        }
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=self.root)
        wall = time.perf_counter() - started
        if done.returncode not in (0, 1) or not done.stdout.strip():
            raise SystemExit(f"skill-eval run failed ({done.returncode}): {done.stderr[-2000:]}")
        if not versions.is_file() and (state / versions.name).is_file():
            shutil.copy(state / versions.name, versions)
        artifact = json.loads(
            Path(done.stdout.strip().splitlines()[-1]).read_text(encoding="utf-8")
        )
        return wall, artifact


def check_artifact(name: str, artifact: dict[str, Any]) -> None:
    evaluation = artifact["evaluation"]
    if evaluation.get("passed") != evaluation.get("total_tasks") or artifact.get("errors"):
        raise SystemExit(
            f"skill-eval's {name} run did not pass every task: the benchmark is broken"
        )


# -- pairing and printing --------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    bare: float
    ours: float
    ratio: float


def paired(bare: Callable[[], float], ours: Callable[[], float], rounds: int) -> Pair:
    """Medians of `rounds` runs of each, in turns (the order swapped every round)."""
    walls: tuple[list[float], list[float]] = ([], [])
    for i in range(rounds):
        order = ((0, bare), (1, ours)) if i % 2 == 0 else ((1, ours), (0, bare))
        for side, fn in order:
            walls[side].append(fn())
    ratios = [b / a for a, b in zip(*walls, strict=True)]
    return Pair(statistics.median(walls[0]), statistics.median(walls[1]), statistics.median(ratios))


def row(label: str, n: int, at_once: int, pair: Pair, target: str = "") -> str:
    return (
        f"{label:24s} {at_once:>3d} {pair.bare:8.2f} s {pair.bare / n * 1000:7.0f} ms "
        f"{pair.ours:8.2f} s {pair.ours / n * 1000:7.0f} ms {pair.ratio:6.2f}x  {target}"
    )


def target_text(load: Workload, at_once: int, pair: Pair) -> str:
    if load.name == "text" and at_once in (1, 4):
        met = "met" if pair.ratio <= TEXT_TARGET else "MISSED"
        return f"target <= {TEXT_TARGET}x: {met}"
    if load.name == "trigger" and at_once == 4:
        met = "met" if pair.ratio <= 1.0 else "MISSED"
        return f"target <= 1.00x (run_eval.py's 60 calls): {met}"
    return ""


def bench(
    load: Workload,
    binary: str,
    skill: Path,
    server: FakeAnthropic,
    root: Path,
    args: argparse.Namespace,
) -> list[str]:
    runs = SkillEvalRuns(root / f"se-{load.name}", server.base_url)
    scratch = root / "scratch"
    scratch.mkdir(exist_ok=True)
    n = len(load.calls)

    def ours(at_once: int) -> float:
        wall, artifact = runs.run(load.suite, skill, at_once, load.flags)
        check_artifact(load.name, artifact)
        return wall

    ours(4)  # warm-up: the file cache, the CLI's first start, `claude --version`; not counted
    bare_call(binary, load.calls[0], skill, server.base_url, scratch)
    lines = []
    for at_once in args.concurrency:
        pair = paired(
            partial(bare_batch, binary, load, skill, server.base_url, scratch, at_once),
            partial(ours, at_once),
            args.rounds,
        )
        lines.append(
            row(f"{n} {load.name} attempts", n, at_once, pair, target_text(load, at_once, pair))
        )
        print(lines[-1], flush=True)
    return lines


HEADER = (
    f"{'work':24s} {'at':>3s} {'bare claude -p':>20s} {'skill-eval':>20s} {'ratio':>7s}\n"
    f"{'':24s} {'once':>3s} {'total':>10s} {'per call':>9s} {'total':>10s} {'per att.':>9s}"
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each side per row (medians)")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds per model reply")
    parser.add_argument("--text", type=int, default=12, help="text tasks")
    parser.add_argument("--agent", type=int, default=8, help="agent tasks (Skill, Write, answer)")
    parser.add_argument(
        "--queries", type=int, default=20, help="trigger queries (half should trigger)"
    )
    parser.add_argument("--samples", type=int, default=3, help="samples per trigger query")
    parser.add_argument("--concurrency", default="1,4,8", help="calls at once, comma-separated")
    parser.add_argument("--only", default="text,agent,trigger,original", help="which rows")
    parser.add_argument("--original", type=Path, help="a checkout of the original tool")
    args = parser.parse_args()
    args.concurrency = [int(c) for c in args.concurrency.split(",")]
    only = set(args.only.split(","))
    if (missing := jail_problem()) is not None:
        raise SystemExit(f"cannot bench skill-eval's attempts: {missing}")
    binary = os.environ.get("SKILL_EVAL_CLAUDE_BIN") or bundled_cli()
    print(
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; the fake API answers in "
        f"{args.latency:g} s; medians of {args.rounds} runs of each side in turns"
    )
    with tempfile.TemporaryDirectory(prefix="bench-attempts-") as tmp:
        root = Path(tmp)
        skill = write_skill(root / "skill")
        if binary is None:
            print("Claude Code rows: skipped (no claude CLI: pip install -e '.[agent]')")
        elif only & {"text", "agent", "trigger"}:
            print(f"Claude Code: {binary}\n{HEADER}")
            sizes = {"text": args.text, "agent": args.agent, "samples": args.samples}
            with FakeAnthropic(rules=RULES, default=DEFAULT, latency=args.latency) as server:
                for load in workloads(root, binary, sizes, args.queries):
                    if load.name in only:
                        bench(load, binary, skill, server, root, args)
        if "original" in only:
            from bench_original import bench_original

            bench_original(args.original, root, skill, args.latency, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
