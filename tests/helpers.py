"""Small builders shared by the tests: suites, skills, rankings and CLI runs in tmp_path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from click.testing import CliRunner

from skill_eval.cli import cli
from skill_eval.core.execution import Usage
from skill_eval.executors.pricing import load_price_table

if TYPE_CHECKING:
    from tests.fakes.anthropic_server import FakeAnthropic

REPO = Path(__file__).resolve().parent.parent
DEMO_SUITE = REPO / "task_suites" / "demo" / "task_suite.yaml"
DEMO_OUTPUTS = REPO / "task_suites" / "demo" / "mock_outputs.yaml"
DEMO_SKILL = REPO / "fixtures" / "demo-skill"
DEMO_SKILL_IMPROVED = REPO / "fixtures" / "demo-skill-improved"
DEMO_RANKING = REPO / "fixtures" / "demo-ranking.json"


def write_suite(directory: Path, tasks: list[dict[str, Any]], **top: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    data = {"skill_id": "demo", "version": "1.0", **top, "tasks": tasks}
    path = directory / "task_suite.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def contains_task(task_id: str, *expected: str) -> dict[str, Any]:
    return {
        "id": task_id,
        "prompt": f"Do {task_id}",
        "judge": {"type": "contains", "expected": list(expected)},
    }


def write_skill(
    directory: Path, body: str = "Always answer with DONE.", name: str | None = None
) -> Path:
    """A valid skill folder; its `name` is the folder's unless given."""
    directory.mkdir(parents=True, exist_ok=True)
    name = name or directory.name
    (directory / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: test skill\n---\n\n# {name}\n\n{body}\n", encoding="utf-8"
    )
    return directory


def write_outputs(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def write_ranking(
    path: Path, candidates: list[dict[str, Any]], target: str = "skill", run_id: str = "run-1"
) -> Path:
    path.write_text(
        json.dumps(
            {
                "run_id": run_id,
                "lane": "test",
                "target": {"path": target},
                "scored_candidates": candidates,
            }
        ),
        encoding="utf-8",
    )
    return path


def run_cli(*args: str) -> tuple[int, str, str]:
    """Run `skill-eval ARGS` in-process; returns (exit code, stdout, stderr)."""
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def run_script(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "evaluate.py"), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def read_json(path: str | Path) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def graded_context(
    suite_dir: Path,
    grader: str = "mock",
    *,
    options: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    **fields: Any,
) -> Any:
    """A JudgeContext whose grader is executor `grader`'s, built as a run builds it
    (`judges.llm.build_grader` from `options`, kept as the context's backend_options, and
    `env`); `fields` are the context's other fields (cache, judge_model, ...)."""
    from skill_eval.judges.base import JudgeContext
    from skill_eval.judges.llm import build_grader

    return JudgeContext(
        suite_dir=suite_dir,
        grader=build_grader(grader, options=options, env=env),
        backend_options=dict(options or {}),
        env=env,
        **fields,
    )


def jail_missing() -> str | None:
    """Why no bubblewrap jail runs here (what to install), or None. Agent attempts and code
    judges run only in one, so their tests skip with this reason where it is missing."""
    from skill_eval.jail.bubblewrap import problem

    return problem()


def checkout_closed_to_others() -> str | None:
    """Why a container's jail (another user) cannot run this checkout's code, or None: a
    folder on sys.path is closed to other users (a clone made in a `mktemp -d` folder)."""
    from skill_eval.judges.python_jail import import_folders

    shown = import_folders()[0]  # the folders the jail mounts as they are
    closed = [f for f in shown if os.path.isdir(f) and os.stat(f).st_mode & 0o005 != 0o005]
    return (
        f"{closed[0]} is closed to other users, and a container's jail runs as one"
        if closed
        else None
    )


def journal_records(path: Path) -> list[dict[str, Any]]:
    """The attempt records of a journal file, in order (its signed header and notes left out)."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [r for r in map(json.loads, lines) if "record" not in r]


def write_signed_journal(path: Path, records: list[dict[str, Any]], state_root: Path) -> None:
    """Write `records` as a journal signed with the state root's key, as the harness would
    (for records of another shape than today's, e.g. an older version's)."""
    from skill_eval.engine.journal_key import JournalKey

    key = JournalKey.for_state_root(state_root)
    header = {"record": "journal", "version": 1, "journal_id": "0" * 32, "key_id": key.key_id}
    lines, previous = [], ""
    for record in [header, *({k: v for k, v in r.items() if k != "mac"} for r in records)]:
        mac = key.sign("0" * 32, previous, record)
        lines.append(json.dumps({**record, "mac": mac}) + "\n")
        previous = mac
    path.write_text("".join(lines), encoding="utf-8")


def replies_cost(fake: FakeAnthropic) -> float:
    """What the fake's answered replies cost at the built-in prices (its own account)."""
    prices = load_price_table()
    return sum(
        prices.cost(str(r.reply["model"]), Usage.from_dict(r.reply["usage"]))[0]
        for r in fake.requests_to("/v1/messages")
        if r.status == 200 and isinstance(r.reply, dict)
    )


def path_without(names: tuple[str, ...], into: Path) -> str:
    """One directory of links to every program on PATH but `names` (the first of each name
    wins, as on PATH)."""
    into.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for entry in os.scandir(directory):
            link = into / entry.name
            if entry.name not in names and not os.path.lexists(link):
                link.symlink_to(entry.path)
    return str(into)
