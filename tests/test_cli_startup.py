"""Start-up stays cheap: `skill-eval --help` and `validate` import only what they use.

Checked on the set of imported modules, not on a timing (timings on a shared 2-core machine
are noise): each case runs the real CLI in a fresh interpreter and lists sys.modules at exit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from skill_eval.cli import COMMANDS, SUMMARIES, cli

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "task_suites" / "demo" / "task_suite.yaml"

# What a run needs and --help / validate must never load (each costs 10-200 ms).
HEAVY = [
    "anthropic",
    "rich",
    "jinja2",
    "diskcache",
    "regex",
    "claude_agent_sdk",
    "skill_eval.engine.runner",
    "skill_eval.engine.conductor",
    "skill_eval.engine.evaluation",
    "skill_eval.engine.jobs",
    "skill_eval.executors.mock",
    "skill_eval.judges.pytest_judge",
    "skill_eval.judges.pytest_run",
    "skill_eval.cli.run_cmd",
    "importlib.metadata",
    "pkg_resources",
]

_PROBE = """
import atexit, json, sys
atexit.register(lambda: sys.__stderr__.write("MODULES=" + json.dumps(sorted(sys.modules))))
sys.argv = ["skill-eval", *json.loads(sys.argv[1])]
from skill_eval.cli import main
main()
"""


def _modules_after(*args: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(list(args))],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    marker = proc.stderr.rsplit("MODULES=", 1)
    assert len(marker) == 2, proc.stderr
    return set(json.loads(marker[1])), proc


@pytest.mark.parametrize("args", [["--help"], ["validate", str(DEMO)]], ids=["help", "validate"])
def test_command_imports_nothing_heavy(args: list[str]) -> None:
    modules, proc = _modules_after(*args)
    assert proc.returncode == 0, proc.stderr
    loaded = [name for name in HEAVY if name in modules]
    assert loaded == [], f"`skill-eval {' '.join(args)}` imported {loaded}"


def test_help_lists_no_command_module() -> None:
    modules, proc = _modules_after("--help")
    assert "validate" in proc.stdout and "run" in proc.stdout
    assert not [m for m in modules if m.startswith("skill_eval.cli.") and m.endswith("_cmd")]
    assert "yaml" not in modules and "jsonschema" not in modules


def test_invalid_suite_still_gets_jsonschema_wording(tmp_path: Path) -> None:
    """validate checks with jsonschema (the one validator) and words its errors as ours."""
    bad = tmp_path / "task_suite.yaml"
    bad.write_text(
        'version: "1.0"\ntasks:\n  - id: t1\n    prompt: 3\n'
        "    judge: {type: contains, expected: [x]}\n"
    )
    modules, proc = _modules_after("validate", str(bad))
    assert proc.returncode == 2
    assert 'tasks[0] (id "t1").prompt: must be a non-empty string' in proc.stderr
    assert "jsonschema" in modules


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_summaries_match_commands(name: str) -> None:
    """--help shows SUMMARIES instead of importing each command: they must not drift."""
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    assert SUMMARIES.get(name) == command.get_short_help_str(limit=10_000), (
        f"add or update SUMMARIES[{name!r}] in skill_eval/cli/__init__.py"
    )


def test_help_output_unchanged_by_summaries() -> None:
    """The listing is click's own: same rows as when every command is imported."""
    ctx = click.Context(cli)
    formatter = ctx.make_formatter()
    cli.format_commands(ctx, formatter)
    fast = formatter.getvalue()
    formatter = ctx.make_formatter()
    click.Group.format_commands(cli, ctx, formatter)
    assert fast == formatter.getvalue()
