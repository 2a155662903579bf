"""How public skills' own evals fare in the offline gate (issues 47 and 48): for every skill
folder under CORPUS (a folder holding SKILL.md, at most two levels down), a copy of the folder
is judged by `skill-eval gate DIR --allow-unjudged`, offline, no key, and classed:

    sound       its evals load as written and every deterministic check passes its reference
    not sound   its evals load, and the gate finds a fault (the row says which)
    unreadable  its evals do not load (the row says why)
    no evals    the folder holds none (a corpus copy keeps evals found outside the skill
                folder, at the repository's root, under `_repo/`: those are counted apart,
                as `run SKILL_DIR` does not look there)

    python scripts/public_evals.py CORPUS [--jobs 2] [--timeout 300] [--rows]

Prints the counts (and with --rows one line a skill); asserts nothing. A corpus is a folder of
real public skills copied for reading; none ships with skill-eval.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CORPUS_ONLY = {"_repo", "SOURCE.json"}  # what a corpus copy adds beside the skill's own files
VERDICTS = ("sound", "not sound", "unreadable", "no evals")


def skill_folders(corpus: Path) -> list[Path]:
    """Every folder under `corpus` that holds a SKILL.md, two levels down at most."""
    found = [p.parent for p in corpus.glob("*/SKILL.md")]
    found += [p.parent for p in corpus.glob("*/*/SKILL.md")]
    return sorted(set(found))


def judge(folder: Path, timeout: float) -> tuple[str, str]:
    """(verdict, what the gate said of it) for one skill folder, judged in a rebuilt copy of
    its repository (the skill at its path, what the corpus kept of the repository's root
    beside it, a git repository as the original is)."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        skill = repo / source_path(folder)
        shutil.copytree(folder, skill, ignore=lambda _d, names: CORPUS_ONLY & set(names))
        if (folder / "_repo").is_dir():
            shutil.copytree(folder / "_repo", repo, dirs_exist_ok=True)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        try:
            done = subprocess.run(
                ["skill-eval", "gate", str(skill), "--allow-unjudged"],
                capture_output=True, text=True, timeout=timeout, cwd=repo,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return "not sound", f"no answer in {timeout:g} s"
    said = done.stdout + done.stderr
    if "not judged (no evals)" in said:
        outside = (folder / "_repo" / "evals").is_dir()
        return "no evals", "evals at the repository root" if outside else ""
    row = _line_with(said, "NOT SOUND") or _line_with(said, "cannot be read")
    if done.returncode == 0 and not row:
        return "sound", ""
    loaded = re.search(r"\s(?:its own|base's)\s+(\d+)\s", row)
    if loaded is None or loaded[1] == "0":  # no task came out of the evals
        return "unreadable", row.split("NOT SOUND: ")[-1]
    return "not sound", row.split("NOT SOUND: ")[-1]


def source_path(folder: Path) -> str:
    """Where the skill lies in its repository (SOURCE.json's `path`; `.`: the root)."""
    try:
        path = json.loads((folder / "SOURCE.json").read_text(encoding="utf-8"))["path"]
    except (OSError, ValueError, KeyError, TypeError):
        return "skill"
    return "skill" if path in ("", ".") else str(path)


def _line_with(text: str, needle: str) -> str:
    return next((line.strip() for line in text.splitlines() if needle in line), "")[:300]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--rows", action="store_true", help="one line a skill")
    args = parser.parse_args(argv)
    folders = skill_folders(args.corpus)
    if not folders:
        print(f"{args.corpus}: no skill folder (SKILL.md) found", file=sys.stderr)
        return 2
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda f: judge(f, args.timeout), folders))
    counts = Counter(verdict for verdict, _ in results)
    outside = sum(1 for verdict, why in results if verdict == "no evals" and why)
    if args.rows:
        for folder, (verdict, why) in zip(folders, results, strict=True):
            name = folder.relative_to(args.corpus)
            print(f"{verdict:<10}  {name}" + (f"  ({why})" if why else ""))
    with_evals = len(folders) - counts["no evals"]
    loaded = counts["sound"] + counts["not sound"]
    print(f"{len(folders)} skill folders; {with_evals} with evals in the folder "
          f"({outside} more keep theirs at the repository root)")  # fmt: skip
    print(f"load as written: {loaded} of {with_evals}; unreadable: {counts['unreadable']}")
    print(f"the offline gate: sound {counts['sound']} of {loaded} that load; "
          f"not sound {counts['not sound']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
