"""What a new user hit in their first week (issue 53), each run as they ran it, through the real
CLI: the message points at the fix, on one line naming the file (and the field where there is
one), with no traceback and the right exit code."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import (
    DEMO_OUTPUTS,
    DEMO_SKILL_IMPROVED,
    DEMO_SUITE,
    contains_task,
    run_cli,
    write_skill,
    write_suite,
)


def one_line_error(code: int, err: str, expected_code: int = 2) -> str:
    """The message of a run that stopped with one `Error:` line and no traceback."""
    assert code == expected_code, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    return lines[0].removeprefix("Error: ")


def demo_run(tmp_path: Path, *flags: str) -> tuple[int, str, str]:
    return run_cli(
        *("run", "--skill-path", str(DEMO_SKILL_IMPROVED), "--task-suite", str(DEMO_SUITE)),
        *("--state-root", str(tmp_path / "state"), *flags),
    )


# --- --mock-outputs without --mock -------------------------------------------------------------


def test_mock_outputs_without_mock_says_add_mock(tmp_path: Path) -> None:
    code, _, err = demo_run(tmp_path, "--mock-outputs", str(DEMO_OUTPUTS))
    assert one_line_error(code, err) == (
        "--mock-outputs: the 'claude-cli' executor this run uses has no option 'mock_outputs'; "
        "only the 'mock' executor takes it (no model is called): add --mock"
    )
    code, _, err = demo_run(tmp_path, "--executor", "anthropic", "--mock-rules")
    assert "--mock-rules: the 'anthropic' executor this run uses" in one_line_error(code, err)
    assert not (tmp_path / "state").exists()  # refused before anything ran
    code, out, err = demo_run(tmp_path, "--mock", "--mock-outputs", str(DEMO_OUTPUTS), "-q")
    assert code == 0 and out.strip(), err  # and with --mock it runs


# --- report on a file that is no artifact ------------------------------------------------------


def test_report_of_an_eval_set_says_it_is_no_artifact_and_what_is(tmp_path: Path) -> None:
    evals = tmp_path / "evals" / "evals.json"
    evals.parent.mkdir()
    evals.write_text(json.dumps({"skill_name": "s", "evals": [{"id": 1, "prompt": "p"}]}))
    for path in (evals, DEMO_SUITE):  # an eval set, and a suite's YAML
        code, out, err = run_cli("report", str(path))
        message = one_line_error(code, err)
        assert out == "" and message.startswith(f"{path}: not ")
        assert "evaluation artifact" in message or "JSON artifact" in message
        assert message.endswith(
            "an artifact is what `skill-eval run` writes, <state-root>/evaluations/*.json (the "
            "path it prints on stdout; .skill-eval/ by default)"
        )
        assert "is required" not in message  # not the schema's missing fields
    code, _, err = run_cli("compare", str(evals), str(evals))  # every reader of artifacts
    assert f"{evals}: not an evaluation artifact" in one_line_error(code, err)


# --- --changed-since in a shallow checkout -----------------------------------------------------


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"]
        + list(args),
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_changed_since_a_base_a_shallow_clone_lacks_says_how_to_fetch_it(tmp_path: Path) -> None:
    """actions/checkout's default: one commit of the pull request's branch, no origin/main."""
    upstream = tmp_path / "upstream"
    skill = write_skill(upstream / "skills" / "s")
    (skill / "evals").mkdir()
    (skill / "evals" / "evals.json").write_text(
        json.dumps({"skill_name": "s", "evals": [{"id": 1, "prompt": "p", "assertions": ["x"]}]})
    )
    git(upstream, "init", "-q", "-b", "main")
    git(upstream, "add", ".")
    git(upstream, "commit", "-qm", "skills")
    git(upstream, "checkout", "-q", "-b", "change")
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nMore.\n")
    git(upstream, "commit", "-qam", "change")
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "change", upstream.as_uri(), "work")
    code, _, err = run_cli(
        "run", str(work / "skills"), "--changed-since", "origin/main", "--mock",
        "--state-root", str(tmp_path / "state"),
    )  # fmt: skip
    assert one_line_error(code, err) == (
        "--changed-since: 'origin/main' is not in this checkout (no branch, tag or commit of "
        "that name here); fetch it first (`git fetch origin main`), or in GitHub Actions give "
        "actions/checkout `fetch-depth: 0` (a shallow clone holds only the pull request's commit)"
    )
    git(work, "fetch", "-q", "origin", "main:refs/remotes/origin/main")  # as the message says
    code, out, err = run_cli(
        "run", str(work / "skills"), "--changed-since", "origin/main", "--mock",
        "--state-root", str(tmp_path / "state"), "--policy", "delta",
    )  # fmt: skip
    assert "--changed-since origin/main: 1 of 1 skill(s)" in err and out.strip(), err


# --- a Latin-1 evals.json ----------------------------------------------------------------------


def test_a_latin1_eval_set_gets_the_words_a_latin1_suite_gets(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "s")
    (skill / "evals").mkdir()
    evals = skill / "evals" / "evals.json"
    raw = '{"skill_name": "s",\n "evals": [{"id": 1, "prompt": "Caf\u00e9 menu"}]}'
    evals.write_bytes(raw.encode("latin-1"))
    offset = raw.index("\u00e9")
    said = f"not valid UTF-8 (byte 0xe9 at offset {offset}); save the file as UTF-8"
    code, _, err = run_cli("run", str(skill), "--mock", "--state-root", str(tmp_path / "st"))
    assert one_line_error(code, err) == f"{evals}:2: {said}"
    code, _, err = run_cli("validate", str(skill))
    assert code == 2 and err.strip() == f"{evals}:2: {said}"
    suite = tmp_path / "suite" / "task_suite.yaml"
    suite.parent.mkdir()
    text = 'skill_id: s\nversion: "1.0"\ntasks:\n  - id: a\n    prompt: "Caf\u00e9"\n'
    suite.write_bytes(text.encode("latin-1"))
    code, _, err = run_cli("validate", str(suite))
    at = text.index("\u00e9")
    assert code == 2 and err.strip() == f"{suite}:5: " + said.replace(str(offset), str(at))
    outputs = tmp_path / "mock_outputs.yaml"  # and a mock outputs file alike
    outputs.write_bytes("a: caf\u00e9\n".encode("latin-1"))
    code, _, err = demo_run(tmp_path, "--mock", "--mock-outputs", str(outputs))
    assert one_line_error(code, err) == f"{outputs}:1: " + said.replace(str(offset), "6")


# --- a folder with evals but no SKILL.md -------------------------------------------------------


def test_validate_and_run_say_the_same_of_evals_without_a_skill(tmp_path: Path) -> None:
    folder = tmp_path / "nosk"
    (folder / "evals").mkdir(parents=True)
    evals = folder / "evals" / "evals.json"
    checks = [{"type": "contains", "value": "x"}]
    evals.write_text(json.dumps({"evals": [{"id": 1, "prompt": "p", "assertions": checks}]}))
    said = (
        f"{folder}: no SKILL.md in it, though it has evals/: a skill folder holds SKILL.md "
        f"beside evals/ (to read its eval set alone, name the file: {evals})"
    )
    code, _, err = run_cli("validate", str(folder))
    assert code == 2 and err.strip() == said
    code, _, err = run_cli("run", str(folder), "--mock")
    assert one_line_error(code, err) == said
    code, _, err = run_cli("validate", str(evals))  # and what it says works
    assert code == 0, err


# --- --margin in points, --samples 0 -----------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ("--margin", "-10"),
            "--margin must be between 0 and 1, got -10 (a fraction, not points: did you mean "
            "--margin 0.10?)",
        ),
        (
            ("--margin", "10"),
            "--margin must be between 0 and 1, got 10 (a fraction, not points: did you mean "
            "--margin 0.10?)",
        ),
        (
            ("--margin", "-0.05"),
            "--margin must be between 0 and 1, got -0.05 (a size, without a sign: did you mean "
            "--margin 0.05?)",
        ),
        (
            ("--min-delta", "-5"),
            "--min-delta must be between -1 and 1, got -5 (a fraction, not points: did you "
            "mean --min-delta -0.05?)",
        ),
        (("--margin", "500"), "--margin must be between 0 and 1, got 500"),
        (("--samples", "0"), "--samples must be at least 1, got 0"),
        (("--pass-k", "3", "--samples", "2"), "--samples (2) must be at least --pass-k (3)"),
    ],
)
def test_rates_in_points_get_the_fraction_and_samples_names_itself(
    tmp_path: Path, flags: tuple[str, ...], message: str
) -> None:
    code, _, err = demo_run(tmp_path, "--mock", *flags)
    assert one_line_error(code, err) == message


# --- the failure trace -------------------------------------------------------------------------


def test_the_failure_trace_line_says_what_the_file_is_for(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", [contains_task("a", "never said")])
    skill = write_skill(tmp_path / "skill")
    code, _, err = run_cli(
        "run", "--skill-path", str(skill), "--task-suite", str(suite), "--mock",
        "--policy", "delta", "--state-root", str(tmp_path / "state"), "-q",
    )  # fmt: skip
    assert code == 1, err
    lines = [line for line in err.splitlines() if line.startswith("failure trace: ")]
    assert len(lines) == 1, err
    path = lines[0].removeprefix("failure trace: ").split(" (")[0]
    assert Path(path).is_file() and Path(path).parent == tmp_path / "state" / "traces"
    assert lines[0].endswith(
        "(the failed tasks and the scores before and after, for an improvement pipeline's "
        "generator, "
        "`propose.py --trace`, in the original evaluator's format: references/pipeline.md)"
    )


# --- the mock grader's verdicts ----------------------------------------------------------------


def test_the_mock_graders_verdicts_say_so_wherever_they_are_shown(tmp_path: Path) -> None:
    from skill_eval.judges.llm import SCRIPTED

    skill = write_skill(tmp_path / "pdf")
    (skill / "evals").mkdir()
    statements = ["The script imports pypdf", "It prints the text"]
    evals = {
        "evals": [{"id": 1, "prompt": "Extract text from doc.pdf", "expectations": statements}]
    }
    (skill / "evals" / "evals.json").write_text(json.dumps(evals), encoding="utf-8")
    state = tmp_path / "state"
    code, out, err = run_cli("run", str(skill), "--mock", "--state-root", str(state), "-q")
    assert code == 4, err
    judged = [a["judge"] for a in map(json.loads, next(state.glob("runs/*/attempts.jsonl"))
              .read_text().splitlines()) if "judge" in a]  # fmt: skip
    assert judged and all(
        j["details"].startswith(f"{SCRIPTED} 2/2 expectations passed") for j in judged
    )
    assert all(j["data"]["scripted"] is True for j in judged)
    [run_dir] = state.glob("runs/*")
    code, shown, _ = run_cli("show", str(run_dir), "--task", "eval-1")
    assert code == 0 and shown.count(f"{SCRIPTED} 2/2 expectations passed") == 2  # both arms
    artifact = out.strip()
    code, html, _ = run_cli("report", artifact, "--format", "html")
    assert code == 0 and SCRIPTED in html
    # the mock grader bills nothing: no judge call is counted or priced (issue 49)
    assert "judges $" not in err, err


@pytest.mark.parametrize(
    ("calls", "said"),
    [(0, ""), (1, ", judges $0.0010 (1 call)"), (2, ", judges $0.0010 (2 calls)")],
)
def test_an_arms_judge_calls_are_counted_in_words(calls: int, said: str) -> None:
    from skill_eval.report.render import _judges_cost

    assert _judges_cost({"judge_calls": calls, "judge_cost_usd": 0.001}) == said


def test_a_judge_model_that_answered_is_not_called_a_mock(tmp_path: Path) -> None:
    from skill_eval.core.model import Task
    from skill_eval.core.work import Work
    from skill_eval.judges import build_judge, run_judge
    from skill_eval.judges.expectations import TOOL_NAME
    from skill_eval.judges.llm import SCRIPTED
    from tests.fakes.anthropic_server import FakeAnthropic
    from tests.helpers import graded_context

    config = {"type": "expectations", "expectations": ["Says hello"]}
    task = Task(id="t", prompt="Greet", judge=config)
    reply = {"e1": {"verdict": "PASS", "evidence": "It says hello."}}
    with FakeAnthropic(rules=[{"tool_choice_name": TOOL_NAME, "tool_input": reply}]) as fake:
        options = {"base_url": fake.base_url, "max_retries": 0}
        real = graded_context(
            tmp_path, "anthropic", env={"ANTHROPIC_API_KEY": "k"}, options=options
        )
        by_model = run_judge(build_judge(config), task, Work("hello"), real)
    by_mock = run_judge(build_judge(config), task, Work("hello"), graded_context(tmp_path))
    assert by_model.passed and by_model.details.startswith("1/1 expectations passed")
    assert SCRIPTED not in by_model.details and "scripted" not in by_model.data
    assert by_mock.passed and by_mock.details.startswith(f"{SCRIPTED} 1/1 expectations passed")


# --- mock outputs are keyed by arm, not by skill -----------------------------------------------


def test_a_run_whose_arms_get_the_same_scripted_outputs_says_so(tmp_path: Path) -> None:
    from skill_eval.executors.mock_coverage import SAME_OUTPUTS

    outputs = tmp_path / "outputs.yaml"
    outputs.write_text(
        "\n".join(f"{t}: same text" for t in (
            "added-and-fixed", "breaking-change", "issue-credits", "security-section",
            "title-heading",
        )) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    code, out, err = demo_run(tmp_path, "--mock", "--mock-outputs", str(outputs), "-q")
    said = f"{outputs}: {SAME_OUTPUTS}"
    assert f"warning             {said}" in err.splitlines()  # in the summary, with the verdict
    assert f"warning: {said}" not in err  # not before the run: nothing to fix first
    assert said in json.loads(Path(out.strip()).read_text())["warnings"]
    assert SAME_OUTPUTS.endswith(
        "mock outputs are keyed by arm (candidate, baseline), not by skill"
    )
    code, out, err = demo_run(tmp_path, "--mock", "--mock-outputs", str(DEMO_OUTPUTS), "-q")
    assert SAME_OUTPUTS not in err  # the demo's arms differ


def test_a_skill_with_no_evals_is_nothing_to_run_not_a_pass(tmp_path: Path) -> None:
    """`run SKILL_DIR` on a skill that keeps no evals ran nothing: one line saying so and what
    to do, exit 2 (before, exit 0, as if it had passed). Beside a skill that has evals, it is
    listed and the other runs."""
    bare = write_skill(tmp_path / "skills" / "bare")
    code, out, err = run_cli("run", str(bare), "--mock", "--state-root", str(tmp_path / "s"))
    assert (code, out) == (2, ""), err
    assert err == (
        "Error: bare: no evals (evals/evals.json, a trigger set or evals/task_suite.yaml): "
        "nothing to run; write the skill's evals/evals.json (references/interop.md), or give "
        "a suite with --task-suite FILE --skill-path SKILL_DIR\n"
    )
    judged = write_skill(tmp_path / "skills" / "judged")
    (judged / "evals").mkdir()
    evals = {"skill_name": "judged", "evals": [{"id": 1, "prompt": "p", "expectations": ["x"]}]}
    (judged / "evals" / "evals.json").write_text(json.dumps(evals), encoding="utf-8")
    code, out, err = run_cli(
        "run", str(tmp_path / "skills"), "--mock", "--state-root", str(tmp_path / "s")
    )
    assert len(out.split()) == 1 and "Error:" not in err, err  # judged ran
    assert "bare" in err and "no evals" in err
