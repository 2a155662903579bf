"""How long does a run take, and how big are its artifact and journal, as outputs grow?

For outputs of 1 KB, 1 MB and 50 MB (each arm its own text, scripted through the mock
executor's --mock-outputs), runs `skill-eval run` as a user would (a fresh process, judging
included: a `contains` task and a `regex` task whose match is at the very end), then
`skill-eval rejudge` of the same run, and prints wall times and the sizes of the artifact,
the journal and the run's blob store. The last row is the 50 MB run under the default
--max-output-bytes (10 MB): cut, marked, judged.

    python scripts/bench_outputs.py [--sizes 1K,1M,50M] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LINE = "All work and no play makes a POWERFUL skill.\n"
UNITS = {"K": 1024, "M": 1024 * 1024}
SUITE = """skill_id: bench
version: "1.0"
tasks:
  - id: contains
    prompt: Write a lot.
    judge: {type: contains, expected: [powerful, "the end"]}
  - id: regex
    prompt: Write a lot.
    judge: {type: regex, pattern: "THE END\\\\s*$"}
"""


def size_of(text: str) -> int:
    return int(text[:-1]) * UNITS[text[-1].upper()] if text[-1].upper() in UNITS else int(text)


def output(prefix: str, size: int) -> str:
    return prefix + LINE * max(0, (size - len(prefix) - 7) // len(LINE)) + "THE END"


def skill_eval(*args: str) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "skill_eval.cli", *args], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"skill-eval {args[0]} failed ({proc.returncode}):\n{proc.stderr}")
    return wall, proc.stdout.strip()


def bench(root: Path, label: str, size: int, cut: int | None) -> dict[str, object]:
    root.mkdir(parents=True)
    (root / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (root / "skill").mkdir()
    (root / "skill" / "SKILL.md").write_text(
        "---\nname: skill\ndescription: bench\n---\nBe powerful.\n", encoding="utf-8"
    )
    outputs = {
        arm: {task: output(f"{arm} {task} ", size) for task in ("contains", "regex")}
        for arm in ("candidate", "baseline")
    }
    (root / "outputs.json").write_text(json.dumps(outputs), encoding="utf-8")
    flags = ["--max-output-bytes", str(cut)] if cut is not None else []
    wall, path = skill_eval(
        "run",
        "--standalone",
        "--task-suite",
        str(root / "suite.yaml"),
        "--skill-path",
        str(root / "skill"),
        "--mock",
        "--mock-outputs",
        str(root / "outputs.json"),
        "--state-root",
        str(root / "state"),
        "--policy",
        "delta",
        "-q",
        *flags,
    )
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    run_dir = Path(data["manifest"]["run_dir"])
    rejudge_wall, rejudged = skill_eval("rejudge", str(run_dir))
    again = json.loads(Path(rejudged).read_text(encoding="utf-8"))

    def marks(d: dict) -> list[object]:
        return [
            (a["status"], a["judge"])
            for arm in ("candidate_results", "baseline_results")
            for r in d[arm]
            for a in r["attempts"]
        ]

    blobs = run_dir / "blobs"
    return {
        "label": label,
        "run_s": wall,
        "rejudge_s": rejudge_wall,
        "artifact": Path(path).stat().st_size,
        "journal": (run_dir / "attempts.jsonl").stat().st_size,
        "blobs": sum(f.stat().st_size for f in blobs.iterdir()) if blobs.is_dir() else 0,
        "passed": sum(s == "passed" for s, _ in marks(data)),
        "same": marks(again) == marks(data),
    }


def human(n: int) -> str:
    for unit, scale in (("MB", 1024 * 1024), ("KB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1K,1M,50M")
    parser.add_argument(
        "--keep", metavar="DIR", help="Keep the runs here (default: a temp dir removed at the end)."
    )
    args = parser.parse_args()
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    print(
        "4 outputs per run (2 tasks x 2 arms), each of the size shown; wall times include "
        "process start"
    )
    print(
        f"{'output':<22} {'run':>7} {'rejudge':>8} {'artifact':>10} {'journal':>10} "
        f"{'blobs':>10} {'passed':>6}  same judgements on rejudge"
    )
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(args.keep) if args.keep else Path(tmp)
        plans = [(s, size_of(s), size_of(s) + 1024) for s in sizes]
        if "50M" in sizes:
            plans.append(("50M, default cut 10M", size_of("50M"), None))
        for i, (label, size, cut) in enumerate(plans):
            row = bench(base / f"{i}", label, size, cut)
            print(
                f"{row['label']:<22} {row['run_s']:>6.2f}s {row['rejudge_s']:>7.2f}s "
                f"{human(int(row['artifact'])):>10} {human(int(row['journal'])):>10} "
                f"{human(int(row['blobs'])):>10} {row['passed']:>6}  {row['same']}"
            )


if __name__ == "__main__":
    main()
