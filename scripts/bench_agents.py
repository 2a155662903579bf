"""What skill-eval adds to one OpenCode or Codex attempt (#32; #29's target: within 1.15x of the
bare CLI): medians of N runs of a one-reply text task against the fake OpenAI server, in
turns (a busy machine slows all alike):

- bare: the CLI alone, run by a plain subprocess with the very command line and
  environment skill-eval's attempt starts (isolated, offline), in a fresh empty HOME and
  working directory, no jail, no proxy;
- skill-eval, jailed: the `opencode` / `codex` executor's attempt (the jail, the proxy, the
  workspace copied in and out, the events read);
- skill-eval, --no-jail: the same executor unjailed (what the jail alone costs).

    python scripts/bench_agents.py [--runs 10] [--agent opencode --agent codex]

Needs scripts/install_agents.sh's CLIs and bubblewrap; prints figures, asserts nothing.
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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skill_eval.core.model import ExecutionRequest, Task  # noqa: E402
from skill_eval.core.workspace import AttemptWorkspace  # noqa: E402
from skill_eval.executors.agents.codex import CodexExecutor  # noqa: E402
from skill_eval.executors.agents.config import CodexConfig, OpenCodeConfig  # noqa: E402
from skill_eval.executors.agents.delivery import Delivered  # noqa: E402
from skill_eval.executors.agents.executor import AgentCliExecutor  # noqa: E402
from skill_eval.executors.agents.opencode import OpenCodeExecutor  # noqa: E402
from skill_eval.jail.bubblewrap import problem as jail_problem  # noqa: E402
from skill_eval.jail.session import JailedCommand  # noqa: E402
from tests.agent_clis import MODEL, agent_bin, missing_reason  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402

TARGET = 1.15  # skill-eval's attempt over the bare CLI's run (#29)
PROMPT = "Say PONG."
TASK = Task(id="t", prompt=PROMPT, judge={"type": "contains", "expected": ["PONG"]})
REQUEST = ExecutionRequest(TASK, "baseline", 0, None, 120)


@dataclass(frozen=True)
class HostHome:
    """What an executor's `start` reads of its jail: the HOME the command sees."""

    home: str


def bare(agent: str, server: FakeOpenAI, root: Path) -> Callable[[], object]:
    """One run of the exact command and environment skill-eval's unjailed attempt starts
    (`start`), by a plain subprocess, in a fresh HOME and working directory."""
    plain = executor(agent, server, "none")

    def once() -> object:
        with tempfile.TemporaryDirectory(dir=root) as tmp:
            home, work = Path(tmp) / "home", Path(tmp) / "work"
            home.mkdir()
            work.mkdir()
            jail = cast(JailedCommand, HostHome(str(home)))
            start = plain.start(jail, REQUEST, Delivered(PROMPT))
            for path, data in start.files.items():
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                Path(path).write_bytes(data)
            run = subprocess.run(
                list(start.argv),
                env=dict(start.env),
                cwd=work,
                input=PROMPT.encode(),
                capture_output=True,
                timeout=120,
            )
        if run.returncode != 0 or b"PONG" not in run.stdout:
            raise SystemExit(f"bare {agent} failed ({run.returncode}): {run.stderr[-500:]!r}")
        return run

    return once


def executor(agent: str, server: FakeOpenAI, jail: str) -> AgentCliExecutor:
    env = {"OPENAI_API_KEY": "sk-bench"}
    binary = str(agent_bin(agent))
    if agent == "opencode":
        return OpenCodeExecutor(
            OpenCodeConfig(
                model=MODEL, base_url=server.v1_url, env=env, jail=jail, opencode_bin=binary
            )
        )
    return CodexExecutor(
        CodexConfig(model=MODEL, base_url=server.v1_url, env=env, jail=jail, codex_bin=binary)
    )


def attempt(agent: str, server: FakeOpenAI, root: Path, jail: str) -> Callable[[], object]:
    """One skill-eval attempt of a text task through the executor."""
    run_with = executor(agent, server, jail)
    run_with.preflight()

    def once() -> object:
        ws = AttemptWorkspace.create(root)
        result = run_with.run(replace(REQUEST, workspace=ws.path))
        ws.finish(keep=False)
        if result.error is not None or "PONG" not in result.output:
            raise SystemExit(f"a {agent} attempt ({jail}) failed: {result.error}")
        return result

    return once


def medians(runs: int, ways: dict[str, Callable[[], object]]) -> dict[str, float]:
    """Each way's median wall seconds over `runs` turns (one warm-up each, not counted)."""
    for fn in ways.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(runs):
        for name, fn in ways.items():
            started = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(found) for name, found in times.items()}


def report(agent: str, figures: dict[str, float]) -> None:
    base = figures["bare"]
    print(f"  {agent}: bare CLI {base * 1000:7.1f} ms")
    for name in ("jailed", "no-jail"):
        took = figures[name]
        ratio = took / base
        verdict = "meets" if ratio <= TARGET else "MISSES"
        print(
            f"  {agent}: skill-eval {name:8s} {took * 1000:7.1f} ms, {(took - base) * 1000:+7.1f} "
            f"ms, {ratio:.2f}x the bare CLI ({verdict} the {TARGET}x target)"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of each way")
    parser.add_argument("--agent", action="append", choices=("opencode", "codex"))
    args = parser.parse_args()
    if (missing := jail_problem()) is not None:
        raise SystemExit(f"cannot bench the jailed agents: {missing}")
    print(
        f"medians of {args.runs} runs in turns, a one-reply text task against the fake OpenAI "
        f"server, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    with (
        tempfile.TemporaryDirectory(prefix="bench-agents-") as tmp,
        FakeOpenAI(default="PONG") as server,
    ):
        root = Path(tmp)
        for agent in args.agent or ("opencode", "codex"):
            if agent_bin(agent) is None:
                print(f"  {agent}: skipped ({missing_reason(agent)})")
                continue
            ways = {
                "bare": bare(agent, server, root),
                "jailed": attempt(agent, server, root, "bubblewrap"),
                "no-jail": attempt(agent, server, root, "none"),
            }
            report(agent, medians(args.runs, ways))
    return 0


if __name__ == "__main__":
    sys.exit(main())
