"""Fixed against adaptive concurrency on a rate-limited API: the same attempts through the real
runner and anthropic executor (real SDK) against the fake Messages API with a token-bucket
limit (429 + retry-after + anthropic-ratelimit-* headers). Prints, per mode, the 429s the
service answered, the attempts left in error and the wall time. Goal: adaptive sends fewer
429s and is no slower.

    python scripts/bench_concurrency.py [--attempts 60] [--concurrency 16] [--rate 10]
        [--burst 5] [--latency 0.2] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from skill_eval import Execution  # noqa: E402
from skill_eval.core.model import Arm, Suite, Task  # noqa: E402
from skill_eval.engine.evaluation import evaluate  # noqa: E402
from skill_eval.executors.anthropic_api import AnthropicConfig  # noqa: E402
from skill_eval.executors.base import create_executor  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropic  # noqa: E402


def _suite(tasks: int) -> Suite:
    judge = {"type": "contains", "expected": ["Hello"]}  # the fake's default reply
    return Suite(
        path=ROOT / "bench.yaml",
        skill_id="bench",
        version="1",
        sha256="0" * 64,
        tasks=tuple(
            Task(id=f"t{i}", prompt=f"task {i}", judge=judge, index=i) for i in range(tasks)
        ),
    )


def run_once(args: argparse.Namespace, adaptive: bool) -> tuple[int, int, float, int]:
    """(429s answered, attempts in error, wall seconds, lowest level) of one run."""
    with FakeAnthropic(latency=args.latency, rate_limit=(args.rate, args.burst)) as server:
        executor = create_executor(
            "anthropic",
            AnthropicConfig(
                model="claude-sonnet-4-5",
                base_url=server.base_url,
                concurrency=args.concurrency,
                adaptive_concurrency=adaptive,
                env={"ANTHROPIC_API_KEY": "bench"},
            ),
        )
        lowest = [args.concurrency]

        def watch(_attempt: object) -> None:
            level = getattr(executor, "concurrency_level", None)
            if level:
                lowest[0] = min(lowest[0], level[0])

        started = time.perf_counter()
        result = evaluate(
            _suite(args.attempts),
            [Arm("baseline", None)],
            executor,
            execution=Execution(concurrency=args.concurrency, max_retries=args.max_retries),
            progress=watch,
        )
        wall = time.perf_counter() - started
        limited = server.bucket.limited if server.bucket else 0
    errors = sum(a.status == "error" for a in result.attempts)
    return limited, errors, wall, lowest[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=60)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rate", type=float, default=10.0, help="requests per second")
    parser.add_argument("--burst", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-retries", type=int, default=30)
    args = parser.parse_args()
    floor = max(0.0, (args.attempts - args.burst) / args.rate)
    print(
        f"{args.attempts} attempts, --concurrency {args.concurrency}, limit {args.rate:g} "
        f"req/s (burst {args.burst}), latency {args.latency:g} s; "
        f"lower bound {floor:.1f} s"
    )
    summary = {}
    for adaptive in (False, True):
        name = "adaptive" if adaptive else "fixed"
        runs = [run_once(args, adaptive) for _ in range(args.rounds)]
        for limited, errors, wall, lowest in runs:
            print(
                f"  {name:<8} 429s {limited:>4}  errors {errors}  wall {wall:6.2f} s"
                f"  lowest level {lowest}"
            )
        summary[name] = (
            statistics.median(r[0] for r in runs),
            statistics.median(r[2] for r in runs),
        )
    (fixed_429, fixed_wall), (ad_429, ad_wall) = summary["fixed"], summary["adaptive"]
    print(
        f"median: fixed {fixed_429:g} 429s {fixed_wall:.2f} s; adaptive {ad_429:g} 429s "
        f"{ad_wall:.2f} s ({ad_wall / fixed_wall:.2f}x the fixed wall time)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
