"""`skill-eval show` (a run directory or an artifact as a tree, one task in full) and
`skill-eval compare` (two scripted mock runs of one suite: a flipped task, the paired
interval, --fail-on-regression). Plain text off a terminal; rich on a real pseudo-terminal."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from skill_eval.report.compare import compare_artifacts
from tests.helpers import contains_task, read_json, run_cli, write_outputs, write_skill, write_suite

TASKS = [contains_task("t1", "alpha"), contains_task("t2", "beta"), contains_task("t3", "gamma")]


def scripted_run(
    tmp_path: Path,
    name: str,
    candidate: dict[str, str],
    baseline: dict[str, str] | None = None,
    *extra: str,
) -> Path:
    """A mock run of the three-task suite in tmp_path; returns the artifact's path."""
    suite = write_suite(tmp_path / "suite", TASKS)
    skill = write_skill(tmp_path / "skill")
    outputs = write_outputs(
        tmp_path / f"{name}.yaml",
        {"candidate": candidate, "baseline": baseline or {"t1": "x", "t2": "x", "t3": "x"}},
    )
    code, out, err = run_cli(
        "run",
        "--state-root",
        str(tmp_path / name),
        "--mock",
        "-q",
        "--policy",
        "delta",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--mock-outputs",
        str(outputs),
        *extra,
    )
    assert out.strip(), err
    return Path(out.strip())


def on_terminal(*args: str) -> str:
    """`skill-eval ARGS` with stdout on a pseudo-terminal, as a person at a shell sees it."""
    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "160"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "skill_eval.cli", *args],
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=300) == 0, proc.stderr.read() if proc.stderr else ""
    return b"".join(chunks).decode("utf-8", "replace")


def test_compare_finds_the_flipped_tasks(tmp_path: Path) -> None:
    a = scripted_run(tmp_path, "a", {"t1": "alpha", "t2": "no", "t3": "gamma"})
    b = scripted_run(tmp_path, "b", {"t1": "no", "t2": "beta", "t3": "gamma"})
    diff = compare_artifacts(read_json(a), read_json(b))
    assert (diff.regressed, diff.improved, diff.other_changes) == (["t1"], ["t2"], [])
    assert diff.stats is not None and diff.stats.delta == 0 and diff.stats.n_tasks == 3
    code, out, err = run_cli("compare", str(a), str(b))
    assert code == 0, err
    assert "regressed  t1" in out and "improved   t2" in out
    assert "t1    passed  failed" in out and "t3" not in out.split("\n\n")[0]
    assert "0.6667 -> 0.6667 (change +0, 95% paired interval [" in out
    code, out, _ = run_cli("compare", str(a), str(b), "--fail-on-regression")
    assert code == 1
    code, _, _ = run_cli("compare", str(b), str(b), "--fail-on-regression")
    assert code == 0


def test_compare_reports_errors_cost_and_rejects_unrelated_artifacts(tmp_path: Path) -> None:
    a = scripted_run(tmp_path, "a", {"t1": "alpha", "t2": "beta", "t3": "gamma"})
    data = read_json(a)
    data["candidate_results"][2]["status"] = "error"  # t3 ends in error in B
    data["candidate_results"][2]["attempts"][0].update(status="error", error="boom")
    data["usage"]["candidate"]["cost_usd"] = 0.25
    diff = compare_artifacts(read_json(a), data)
    assert diff.regressed == [] and [
        (t.task_id, t.before, t.after) for t in diff.other_changes
    ] == [("t3", "passed", "error")]
    assert diff.cost["candidate"] == (0.0, 0.25)
    assert diff.stats is not None and diff.stats.n_tasks == 2  # t3 is not matched any more
    other = tmp_path / "other.json"
    unrelated = read_json(a)
    for arm in ("candidate_results", "baseline_results"):
        for result in unrelated[arm]:
            result["task_id"] = "z-" + result["task_id"]
    other.write_text(json.dumps(unrelated), encoding="utf-8")
    code, out, err = run_cli("compare", str(a), str(other))
    assert (code, out) == (2, "")
    assert (
        err.strip() == "Error: the two artifacts have no task in common: not runs of the same suite"
    )
    code, _, err = run_cli("compare", str(a), str(tmp_path / "missing.json"))
    assert code == 2 and err.startswith("Error: ") and "\n" == err[-1] and err.count("\n") == 1


def test_show_a_run_directory_and_an_artifact(tmp_path: Path) -> None:
    artifact = scripted_run(
        tmp_path, "a", {"t1": "alpha", "t2": "nope\x1b[31m", "t3": "gamma"}, None, "--samples", "2"
    )
    run_dir = Path(read_json(artifact)["manifest"]["run_dir"])
    code, from_dir, err = run_cli("show", str(run_dir))
    assert code == 0, err
    lines = from_dir.splitlines()
    assert lines[0].startswith("run ") and "suite " in lines[0]
    t2 = lines[lines.index("t2") : lines.index("t3")]
    assert t2 == [
        "t2",
        "  candidate",
        "    #0 failed  ✗ contains 0.00 missing: 'beta'",
        "    #1 failed  ✗ contains 0.00 missing: 'beta'",
        "  baseline",
        "    #0 failed  ✗ contains 0.00 missing: 'beta'",
        "    #1 failed  ✗ contains 0.00 missing: 'beta'",
    ]
    code, from_artifact, _ = run_cli("show", str(artifact))
    assert code == 0 and from_artifact.splitlines()[1:] == lines[1:]
    assert from_artifact.splitlines()[0].endswith("verdict PASS")


def test_show_one_task_in_full_without_escape_sequences(tmp_path: Path) -> None:
    artifact = scripted_run(tmp_path, "a", {"t1": "alpha", "t2": "nope\x1b[31m red", "t3": "g"})
    code, out, err = run_cli("show", str(artifact), "--task", "t2")
    assert code == 0, err
    assert "== prompt\nDo t2" in out
    assert "== candidate #0: failed, score 0.00 - output\nnope [31m red" in out
    assert "\x1b" not in out
    assert "== baseline #0: failed, score 0.00 - judgement\nmissing: 'beta'" in out
    code, out, err = run_cli("show", str(artifact), "--task", "nope")
    assert (code, out) == (2, "")
    assert err == f"Error: --task nope: no such task in {artifact} (tasks: t1, t2, t3)\n"
    code, _, err = run_cli("show", str(tmp_path / "missing"))
    assert code == 2 and "no such file or directory" in err
    code, _, err = run_cli("show", str(tmp_path))
    assert code == 2 and "not a run directory" in err


def test_rich_views_on_a_terminal_keep_model_text_literal(tmp_path: Path) -> None:
    a = scripted_run(tmp_path, "a", {"t1": "alpha", "t2": "[bold]x[/bold]", "t3": "gamma"})
    b = scripted_run(tmp_path, "b", {"t1": "no", "t2": "beta", "t3": "gamma"})
    tree = on_terminal("show", str(a))
    assert "├── " in tree and "✓ contains 1.00" in tree and "\x1b[" in tree  # styled
    full = on_terminal("show", str(a), "--task", "t2")
    assert "[bold]x[/bold]" in full  # model text is not taken as markup
    compared = on_terminal("compare", str(a), str(b))
    assert "tasks that changed" in compared and "t1" in compared and "regressed" in compared
    assert "\x1b[" not in on_terminal("show", str(a), "--plain")


def test_help_and_the_command_list_do_not_import_rich_or_jinja2() -> None:
    code = (
        "import sys\nfrom click.testing import CliRunner\nfrom skill_eval.cli import cli\n"
        "for args in (['--help'], ['show', '--help'], ['compare', '--help'],"
        " ['report', '--help']):\n"
        "    assert CliRunner().invoke(cli, args).exit_code == 0, args\n"
        "print(sorted(m for m in ('rich', 'jinja2') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "[]", done.stderr


def test_show_task_lists_an_agent_attempts_files_and_transcript(tmp_path: Path) -> None:
    artifact = scripted_run(tmp_path, "a", {"t1": "alpha", "t2": "beta", "t3": "gamma"})
    data = read_json(artifact)
    attempt = data["candidate_results"][0]["attempts"][0]
    attempt["files"] = {"files": [{"path": "src/app.py", "size": 12, "sha256": "ab"}]}
    attempt["transcript"] = [
        {
            "name": "Write",
            "input": {"file_path": "src/app.py"},
            "ok": True,
            "output": "wrote 12 bytes",
        },
        {"name": "Bash", "input": {"command": "false"}, "ok": False, "output": ""},
    ]
    artifact.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = run_cli("show", str(artifact), "--task", "t1")
    assert code == 0, err
    assert "== candidate #0: passed, score 1.00 - changed files\nsrc/app.py (12 bytes)" in out
    assert (
        "== candidate #0: passed, score 1.00 - transcript\n"
        'ok  Write {"file_path": "src/app.py"}\n      wrote 12 bytes\n'
        'ERR Bash {"command": "false"}'
    ) in out
