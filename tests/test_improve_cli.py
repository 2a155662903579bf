"""`skill-eval improve` end to end: offline with the mock improver and the rule-following mock
executor (a test double), and with the anthropic improver through the real SDK against the
loopback fake Messages API (tests/fakes/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skill_eval.core.model import Usage
from skill_eval.executors.mock_model import rule_line
from skill_eval.executors.pricing import DEFAULT_PRICES
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import read_json, run_cli
from tests.test_review_claude_cli import real_claude

CATEGORIES = ("alpha", "beta", "gamma", "delta")
IMPROVER_MODEL = "claude-sonnet-5-5"


def _write_inputs(
    tmp_path: Path, rules: tuple[str, ...] = ("alpha", "beta"), per: int = 16
) -> tuple[Path, Path]:
    """A skill folder holding the rules of `rules` (so it fails the other categories' tasks)
    and a suite of `per` tasks per category, each expecting two terms: 64 by default, enough
    for the confirmation (policy superior, on the tasks set apart) to show a version better."""
    lines = ['skill_id: "demo"', 'version: "1.0"', "tasks:"]
    for c in CATEGORIES:
        for i in range(per):
            lines += [
                f'  - id: "{c}-{i}"',
                f'    prompt: "Explain {c}-{i}."',
                f'    category: "{c}"',
                f'    judge: {{type: contains, expected: ["{c}-term", "word{i}"]}}',
            ]
    suite = tmp_path / "suite.yaml"
    suite.write_text("\n".join(lines) + "\n", encoding="utf-8")
    skill = tmp_path / "demo"
    skill.mkdir()
    body = (
        "---\nname: demo\ndescription: Answers demo questions precisely.\n---\n# Demo\n\n"
        "Answer precisely.\n\n" + "\n".join(rule_line(r) for r in rules) + "\n"
    )
    (skill / "SKILL.md").write_text(body, encoding="utf-8")
    return skill, suite


def test_mock_improve_converges_and_run_evaluates_its_best_candidate(tmp_path: Path) -> None:
    skill, suite = _write_inputs(tmp_path)
    original = (skill / "SKILL.md").read_text(encoding="utf-8")
    state = tmp_path / "state"
    code, out, err = run_cli(
        "improve",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(state),
        "--mock",
        "--improver",
        "mock",
        "--output-dir",
        str(tmp_path / "better"),
    )
    assert code == 0, err
    assert "[iter 1/3] train 0.50" in err  # half the train tasks fail at first
    assert "Accept: train 1.00 >= quality 0.80" in err
    # The log says why the chosen version is the best one: every version's holdout rate.
    [why] = [line for line in err.splitlines() if line.startswith("[select] best:")]
    assert "highest holdout pass rate, 1.00 (iterations: 1 0.42, " in why, err
    ranking = read_json(out.strip())
    assert ranking["improve"]["decision"] == "Accept" and ranking["improve"]["proposed"]
    # confirmed, shown better, on held-out tasks the pick was not made on
    confirmation = ranking["improve"]["confirmation"]
    assert confirmation["split"] == "confirm" and confirmation["samples"] == "fresh"
    assert confirmation["versions_compared"] == 1 and confirmation["passed"] is True
    apart = ranking["improve"]["confirm_tasks"]
    assert len(apart) == 12 and not set(apart) & set(ranking["improve"]["holdout_tasks"])
    assert "on the 12 task(s) set apart to confirm" in err and "[confirm] warning" not in err
    best = ranking["scored_candidates"][0]
    assert best["best"] and best["iteration"] <= 3 and best["holdout_pass_rate"] == 1.0
    # The winner went to --output-dir, every version under the run dir, the user's skill intact.
    assert (skill / "SKILL.md").read_text(encoding="utf-8") == original
    assert "[rule:gamma]" in (tmp_path / "better" / "SKILL.md").read_text(encoding="utf-8")
    run_dir = Path(out.strip()).parent
    assert sorted(p.name for p in (run_dir / "versions").iterdir()) == sorted(
        c["id"] for c in ranking["scored_candidates"]
    )

    code, out, err = run_cli(
        "run",
        "--input",
        out.strip(),
        "--candidate-id",
        best["id"],
        "--eval-threshold",
        "0",
        "--mock",
        "--mock-rules",
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "eval"),
    )
    assert code == 0, err
    assert best["id"] in out.strip().splitlines()[-1]  # the artifact names the candidate
    assert "candidate 1.0000 (64/64)  baseline 0.5000 (32/64)" in err

    code, out, _err = run_cli("improve", "--history", "--state-root", str(state))
    assert code == 0 and "demo  Accept  proposed" in out and "iter 2" in out


def test_nothing_better_exits_1_and_writes_no_winner(tmp_path: Path) -> None:
    skill, suite = _write_inputs(tmp_path)
    script = tmp_path / "outputs.yaml"  # every answer scripted: no rule can change any of them
    script.write_text(
        json.dumps({f"{c}-{i}": f"{c}-term only" for c in CATEGORIES for i in range(16)}),
        encoding="utf-8",
    )
    code, out, err = run_cli(
        "improve",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "s"),
        "--mock",
        "--mock-outputs",
        str(script),
        "--iterate",
        "2",
    )
    assert code == 1, err
    ranking = read_json(out.strip())
    assert not ranking["improve"]["proposed"]
    assert not (Path(out.strip()).parent / "improved").exists()


def test_outputs_per_arm_are_refused_not_ignored(tmp_path: Path) -> None:
    """improve's arms are the versions it writes: a {candidate, baseline} file would match none
    of them and be silently replaced by rule answers, so it is refused in one line."""
    skill, suite = _write_inputs(tmp_path)
    script = tmp_path / "outputs.yaml"
    script.write_text(
        json.dumps(
            {"candidate": {"alpha-0": "alpha-term word0"}, "baseline": {"alpha-0": "nothing"}}
        ),
        encoding="utf-8",
    )
    code, out, err = run_cli(
        "improve",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "s"),
        "--mock",
        "--mock-outputs",
        str(script),
    )
    assert code == 2 and out == ""
    [line] = err.splitlines()
    assert line.startswith(f"Error: {script}: does not script this run")
    assert "keys 'candidate', 'baseline' name no arm of this run" in line
    assert "improve scores its own versions as arms version, original, best" in line
    assert not (tmp_path / "s" / "improve").exists()  # refused before anything ran


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--quality", "2"), "quality: must be in [0, 1]"),
        (("--policy", "nope"), "--policy must be one of"),
        (("--executor", "claude-cli"), "--mock means --executor mock"),
        # the loop's flags reach IterationSettings by name, --timeout as timeout_seconds
        (("--timeout", "0"), "timeout_seconds > 0"),
        (("--holdout", "1"), "holdout: must be in [0, 1)"),
    ],
)
def test_bad_input_is_a_one_line_error(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    skill, suite = _write_inputs(tmp_path)
    code, _out, err = run_cli(
        "improve",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "s"),
        "--mock",
        *args,
    )
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and message in err


def test_missing_skill_folder_is_bad_input(tmp_path: Path) -> None:
    _skill, suite = _write_inputs(tmp_path)
    code, _out, err = run_cli(
        "improve",
        "--skill-path",
        str(tmp_path / "nope"),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "s"),
        "--mock",
    )
    assert code == 2 and err.startswith("Error: --skill-path") and "Traceback" not in err


def _improver_reply(keys: tuple[str, ...] = CATEGORIES) -> str:
    rules = "\n".join(rule_line(k) for k in keys)
    return (
        "=== RATIONALE ===\nAdded one rule per category.\n=== END RATIONALE ===\n"
        "=== FILE: SKILL.md ===\n---\nname: demo\ndescription: Answers demo questions "
        f"precisely.\n---\n# Demo\n\nAnswer precisely.\n\n{rules}\n=== END FILE ===\n"
    )


def _improve_with_fake(
    tmp_path: Path, server: FakeAnthropic, state: Path, skill: Path, suite: Path
) -> tuple[int, str, str]:
    return run_cli(
        "improve",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(state),
        "--mock",
        "--improver",
        "anthropic",
        "--improver-model",
        IMPROVER_MODEL,
        "--base-url",
        server.base_url,
    )


def test_anthropic_improver_through_the_sdk_and_recall_across_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skill, suite = _write_inputs(tmp_path)
    state = tmp_path / "state"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    rules = [{"system_contains": "You improve an agent skill", "text": _improver_reply()}]
    with FakeAnthropic(rules=rules, default="unexpected request") as server:
        code, out, err = _improve_with_fake(tmp_path, server, state, skill, suite)
        first = server.requests_to("/v1/messages")
        assert code == 0, err
        ranking = read_json(out.strip())
        assert [r.rule for r in first] == ["rule0"]
        assert first[0].body["model"] == IMPROVER_MODEL
        assert "Lessons from earlier runs" not in json.dumps(first[0].body)
        usage = first[0].reply["usage"]
        tokens = usage["input_tokens"] + usage["output_tokens"]
        assert tokens > 0 and ranking["improve"]["tokens"] == tokens
        expected = DEFAULT_PRICES[IMPROVER_MODEL].cost(
            Usage(input_tokens=usage["input_tokens"], output_tokens=usage["output_tokens"])
        )
        assert ranking["improve"]["cost_usd"] == pytest.approx(expected) and expected > 0
        best = ranking["scored_candidates"][0]
        assert best["proposed"] and "[rule:delta]" in best["skill_content"]

        server.reset()
        code, out, err = _improve_with_fake(tmp_path, server, state, skill, suite)
        second = server.requests_to("/v1/messages")
    assert code == 0, err
    assert "[recall] 1 learning(s)" in err
    body = json.dumps(second[0].body)
    assert "Lessons from earlier runs" in body and "holdout" in body


def test_missing_key_for_the_anthropic_improver_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skill, suite = _write_inputs(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    code, _out, err = run_cli(
        "improve",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "s"),
        "--mock",
        "--improver",
        "anthropic",
    )
    assert code == 3
    assert err.strip().splitlines()[-1].startswith("Error: ANTHROPIC_API_KEY is not set")


def test_claude_cli_improver_through_the_real_binary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = real_claude()
    skill, suite = _write_inputs(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "dummy-key")
    rules = [{"system_contains": "You improve an agent skill", "text": _improver_reply()}]
    with FakeAnthropic(rules=rules, default="unexpected request") as server:
        code, out, err = run_cli(
            "improve",
            "--skill-path",
            str(skill),
            "--task-suite",
            str(suite),
            "--state-root",
            str(tmp_path / "s"),
            "--mock",
            "--improver",
            "claude-cli",
            "--claude-bin",
            binary,
            "--improver-model",
            IMPROVER_MODEL,
            "--base-url",
            server.base_url,
        )
        answered = [r.rule for r in server.requests_to("/v1/messages") if r.rule != "default"]
    assert code == 0, err
    assert answered == ["rule0"]
    ranking = read_json(out.strip())
    assert ranking["improve"]["proposed"] and ranking["improve"]["tokens"] > 0


def test_the_holdout_gate_rejects_a_version_that_only_wins_on_train(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skill_eval import load_suite
    from skill_eval.improve.split import split_tasks

    skill, suite = _write_inputs(tmp_path)
    train = split_tasks(load_suite(suite).tasks, 0.4, 0).train  # the run's split: same seed
    # Rules keyed by train task id (not category): train passes, holdout learns nothing.
    reply = _improver_reply(("alpha", "beta", *(t for t in train if t[:5] in ("gamma", "delta"))))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with FakeAnthropic(
        rules=[{"system_contains": "You improve an agent skill", "text": reply}],
        default="unexpected request",
    ) as server:
        code, out, err = _improve_with_fake(tmp_path, server, tmp_path / "s", skill, suite)
    assert code == 1, err
    assert "train 0.50 -> 1.00  holdout 0.42" in err  # as the original's: nothing learned
    ranking = read_json(out.strip())
    assert not ranking["improve"]["proposed"] and ranking["scored_candidates"][0]["iteration"] == 1
