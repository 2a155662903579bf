"""How far a first run's estimate is from what the run then spends (#49): suites of short,
medium and long answers, each run on a fresh state root (no earlier run to learn from)
against the fake Messages API answering every task with the task's own reference, on the
`anthropic` executor and on Claude Code (`claude-cli`, the default; needs the CLI and a
jail). For each: the estimate `run --dry-run` prints, what the artifact says the run spent,
and the error, in dollars and in tokens.

    python scripts/estimate_error.py [--executor anthropic --executor claude-cli]
                                     [--tasks 4] [--samples 2] [--skill-chars 6000]
                                     [--mode system|installed] [--size short ...]
                                     [--model ID (default: the executors' default)]

Prints figures (references/cost.md quotes them); asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from click.testing import CliRunner  # noqa: E402

from skill_eval.cli import cli  # noqa: E402
from skill_eval.executors.base import DEFAULT_MODEL  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropic  # noqa: E402

DESCRIPTION = "Writes quarterly revenue summaries."
# Characters of a reference answer, by suite.
SIZES = {"short": 120, "medium": 1_500, "long": 7_000}
WORDS = (
    "the report lists each quarter with its revenue, the change from the quarter before and "
    "a short note on what drove it; totals close the table and a summary line follows. "
)


def text_of(chars: int, seed: int) -> str:
    """Prose of about `chars` characters, different for each seed."""
    body = (f"Answer {seed}: " + WORDS * (chars // len(WORDS) + 1))[:chars]
    return body.rsplit(" ", 1)[0] + "."


def write_suite(folder: Path, size: str, tasks: int) -> tuple[Path, list[dict[str, Any]]]:
    """A suite whose tasks each carry the reference the fake will answer with."""
    folder.mkdir(parents=True)
    written = []
    for i in range(tasks):
        prompt = (
            f"[task {size}-{i}] Write the quarterly revenue summary for division {i}: one "
            "table, totals, and a line on what changed. Keep the house style."
        )
        reference = text_of(SIZES[size] + 37 * i, i)
        judge = {"type": "contains", "expected": ["revenue"]}
        written.append(
            {"id": f"{size}-{i}", "prompt": prompt, "reference": reference, "judge": judge}
        )
    suite = {"skill_id": f"bench-{size}", "version": "1.0", "tasks": written}
    path = folder / "task_suite.yaml"
    path.write_text(json.dumps(suite, indent=1), encoding="utf-8")
    return path, written


def write_skill(folder: Path, chars: int) -> Path:
    folder.mkdir(parents=True)
    body = "\n".join(f"- Rule {n}: {WORDS.strip()}" for n in range(chars // 200 + 1))[:chars]
    text = f"---\nname: bench\ndescription: {DESCRIPTION}\n---\n" + body
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return folder


def cli_run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def estimated(out: str) -> tuple[float, int]:
    line = next(x for x in out.splitlines() if x.startswith("estimate: ~"))
    tokens = int(line.split("~", 1)[1].split(" ", 1)[0].replace(",", ""))
    return float(line.split("$", 1)[1].split(" ", 1)[0]), tokens


def spent(artifact: Mapping[str, Any]) -> tuple[float, int]:
    usd, tokens = 0.0, 0
    for arm in artifact["usage"].values():
        usd += float(arm.get("cost_usd") or 0) + float(arm.get("judge_cost_usd") or 0)
        tokens += sum(
            int(arm.get(k) or 0)
            for k in (
                "input_tokens",
                "output_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
                "judge_tokens",
            )
        )
    return usd, tokens


def rules_for(written: Sequence[Mapping[str, Any]], mode: str) -> list[dict[str, Any]]:
    """Each task answered with its reference; installed, the arm with the skill first
    invokes it (as an agent that finds its skill does), then answers."""
    rules: list[dict[str, Any]] = []
    for task in written:
        marker = f"[task {task['id']}]"
        if mode == "installed":
            steps = [
                {"tool_use": {"name": "Skill", "input": {"skill": "bench"}}},
                task["reference"],
            ]
            rules.append(
                {"messages_contain": marker, "request_contains": DESCRIPTION, "steps": steps}
            )
        rules.append({"messages_contain": marker, "text": task["reference"]})
    return rules


def measure(
    executor: str,
    size: str,
    root: Path,
    settings: argparse.Namespace,
) -> dict[str, Any]:
    tasks, samples, skill_chars, mode = (
        settings.tasks,
        settings.samples,
        settings.skill_chars,
        settings.mode,
    )
    suite, written = write_suite(root / "suite", size, tasks)
    skill = write_skill(root / "skill", skill_chars)
    rules = rules_for(written, mode)
    with FakeAnthropic(rules=rules, default="no such task") as fake:
        os.environ["ANTHROPIC_BASE_URL"] = fake.base_url
        os.environ["ANTHROPIC_API_KEY"] = "bench-key"
        run = [
            *("run", "--task-suite", str(suite), "--skill-path", str(skill)),
            *("--executor", executor, "--model", settings.model, "--samples", str(samples)),
            *("--state-root", str(root / "state"), "--policy", "delta", "-q"),
            *("--concurrency", "2", "--skill-mode", mode),
        ]
        code, out, err = cli_run(*run, "--dry-run")
        if code != 0:
            raise SystemExit(f"dry run failed ({code}): {err}")
        guess_usd, guess_tokens = estimated(out)
        code, out, err = cli_run(*run)
        if code not in (0, 1, 4):
            raise SystemExit(f"run failed ({code}): {err}")
        artifact = json.loads(Path(out.strip()).read_text(encoding="utf-8"))
    usd, tokens = spent(artifact)
    return {
        "executor": executor,
        "suite": size,
        "estimate_usd": guess_usd,
        "actual_usd": usd,
        "usd_error": guess_usd / usd - 1 if usd else None,
        "estimate_tokens": guess_tokens,
        "actual_tokens": tokens,
        "token_error": guess_tokens / tokens - 1 if tokens else None,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--executor", action="append", choices=["anthropic", "claude-cli"])
    parser.add_argument("--size", action="append", choices=sorted(SIZES))
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--skill-chars", type=int, default=6_000)
    parser.add_argument("--mode", choices=["system", "installed"], default="system")
    parser.add_argument("--model", default=DEFAULT_MODEL)
    args = parser.parse_args(argv)
    executors = args.executor or ["anthropic", "claude-cli"]
    print(
        f"{args.tasks} tasks x {args.samples} samples x 2 arms a suite, a {args.skill_chars:,}"
        f"-character SKILL.md in {args.mode} mode, {args.model}; fresh state root (the prior's "
        "estimate)"
    )
    print(f"{'executor':<11} {'suite':<7} {'estimate':>10} {'actual':>10} {'error':>7}   tokens")
    for executor in executors:
        for size in args.size or list(SIZES):
            with tempfile.TemporaryDirectory() as tmp:
                row = measure(executor, size, Path(tmp), args)
            usd_error = row["usd_error"]
            print(
                f"{executor:<11} {size:<7} ${row['estimate_usd']:>9.4f} ${row['actual_usd']:>9.4f}"
                f" {usd_error:>+7.0%}   {row['estimate_tokens']:,} est / "
                f"{row['actual_tokens']:,} spent ({row['token_error']:+.0%})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
