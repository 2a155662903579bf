"""The parts of `skill-eval review`: the injected QA seam, role prompts, the plan, builder and
decision parsers, and bad input (exit 2, one line)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

import skill_eval.review as review
from skill_eval.errors import UsageError
from skill_eval.review import MockRoleModel, QAResult, TaskQA, parse_decision, parse_models
from skill_eval.review.decision import decision_record, validate_record
from skill_eval.review.draft import parse_builder_reply, validate_draft, write_draft
from skill_eval.review.plan import parse_plan
from skill_eval.review.qa_report import build_qa_report
from tests.helpers import run_cli, write_skill
from tests.review_script import (
    REFINE,
    builder_reply,
    decision,
    plan,
    review_skill,
    suite_files,
    write_replies,
)


def test_run_review_calls_the_injected_qa_function_once_per_round(tmp_path: Path) -> None:
    calls: list[tuple[Path, Path, int]] = []

    def qa(suite: Path, skill: Path, samples: int) -> QAResult:
        calls.append((suite, skill, samples))
        both = len(calls) == 1  # round 1: nothing discriminates
        return QAResult(
            (
                TaskQA(
                    "fact",
                    True,
                    both,
                    3,
                    3 if both else 0,
                    3,
                    "stable_pass",
                    "stable_pass" if both else "stable_fail",
                    "evidence",
                ),
            ),
            1.0,
            1.0 if both else 0.0,
            0.0 if both else 1.0,
            "pass",
            None,
        )

    model = MockRoleModel(
        {
            "orchestrator": [plan(), plan(["F1", "F2"])],
            "builder": [builder_reply(suite_files(True))] * 2,
            "visionary": [REFINE, decision("approved")],
        }
    )
    roles = {"orchestrator": "ORCH", "builder": "BUILD", "visionary": "VISION-ROLE"}
    goal = review.read_goal(review_skill(tmp_path))
    outcome = review.run_review(
        goal, model=model, roles=roles, qa_fn=qa, state_root=tmp_path / "s", samples=3
    )
    assert outcome.exit_code == 0 and outcome.record["rounds"] == 2
    assert [c[2] for c in calls] == [3, 3] and calls[0][1] == goal.skill_path
    assert calls[0][0].name == "task_suite.yaml" and "round-1" in str(calls[0][0])
    assert [(role, system) for role, system, _ in model.calls] == [
        ("orchestrator", "ORCH"),
        ("builder", "BUILD"),
        ("visionary", "VISION-ROLE"),
        ("orchestrator", "ORCH"),
        ("builder", "BUILD"),
        ("visionary", "VISION-ROLE"),
    ]
    assert goal.vision == "test skill" and goal.vision_source == "SKILL.md description"


def test_roles_dir_overrides_some_prompts(tmp_path: Path) -> None:
    (tmp_path / "roles").mkdir()
    (tmp_path / "roles" / "builder.md").write_text("my builder\n", encoding="utf-8")
    roles = review.load_roles(tmp_path / "roles")
    assert roles["builder"] == "my builder\n"
    assert roles["visionary"].startswith("You are the **visionary**")
    with pytest.raises(UsageError, match="not a directory"):
        review.load_roles(tmp_path / "nope")


def test_plan_problems_are_named() -> None:
    text = "## Builder tasks\n- [B1] (speed) x\n- [B1] (quality) y\n"
    _plan, problems = parse_plan(text, ["F1"])
    assert problems == [
        "no '## QA checklist' section with '- [C1] (criterion) ...' lines",
        "builder task B1: dimension 'speed' is not one of correctness, completeness, quality, "
        "vision_alignment",
        "item B1 is listed twice",
        "the '## Feedback addressed' section has no line for F1 (every feedback point must be "
        "addressed)",
    ]
    good, none = parse_plan(plan(["F1"]))
    assert none == [] and [i.tag for i in good.builder_tasks] == ["correctness", "vision_alignment"]


def test_builder_paths_stay_inside_the_suite_folder() -> None:
    files, _, problems = parse_builder_reply(
        "=== FILE: ../escape.py ===\nx = 1\n=== END FILE ===\n"
    )
    assert files == {} and "must stay inside" in problems[0]
    files, rationale, problems = parse_builder_reply(builder_reply(suite_files(True)))
    assert problems == [] and rationale == "covers B1 and B2"
    assert sorted(files) == ["mock_outputs.yaml", "task_suite.yaml"]
    assert parse_builder_reply("no blocks")[2] == ["builder reply: no '=== FILE: <path> ===' block"]


def test_a_generated_suite_may_not_use_python_judges(tmp_path: Path) -> None:
    files = suite_files(True)
    files.pop("__rationale__")
    suite = yaml.safe_load(files["task_suite.yaml"])
    suite["tasks"][0]["judge"] = {
        "type": "any",
        "judges": [{"type": "python", "callable": "os:getcwd"}, suite["tasks"][0]["judge"]],
    }
    files["task_suite.yaml"] = yaml.safe_dump(suite)
    write_draft(files, tmp_path / "draft")
    problems = validate_draft(tmp_path / "draft")
    assert problems == [
        'task_suite.yaml: tasks[0] (id "fact").judge: the python judge imports '
        "code into the harness, so a generated suite may not use it; check "
        "with a pytest judge (it runs sandboxed) instead"
    ]


def test_claude_cli_executor_without_the_binary_is_an_error_exit(tmp_path: Path) -> None:
    code, _out, err = run_cli(
        "review",
        str(review_skill(tmp_path)),
        "--state-root",
        str(tmp_path / "s"),
        "--executor",
        "claude-cli",
        "--mock",
        "--claude-bin",
        str(tmp_path / "no-claude"),
    )
    assert code == 3
    assert (
        err.strip().splitlines()[-1]
        == f"Error: claude CLI not found at {tmp_path / 'no-claude'} (--claude-bin)"
    )


NONCE = "0123456789abcdef0123456789abcdef"
TAG = f"decision-{NONCE}"


@pytest.mark.parametrize(
    "reply, problem",
    [
        ("no json here", "the reply holds no <decision-…> block with this request's nonce"),
        (
            f'<{TAG}>{{"decision": "maybe"}}</{TAG}>',
            "decision: must be one of approved, approved_partial, "
            "refine_evaluation, rejected, got 'maybe'",
        ),
        (
            decision("refine_evaluation", tag=TAG),
            "refine_evaluation needs refine.add, refine.change or refine.remove",
        ),
        (decision("rejected", tag=TAG), "rejected needs feedback for the skill's author"),
        (decision("approved"), "the reply holds no <decision-…> block with this request's nonce"),
        (
            decision("approved", tag="decision-" + "f" * 32),  # another call's nonce
            "the reply holds no <decision-…> block with this request's nonce",
        ),
        (
            decision("approved", tag=TAG) + decision("approved", tag=TAG),
            "the reply holds 2 <decision-…> blocks, not one",
        ),
        (f"<{TAG}>[1, 2]</{TAG}>", "the <decision-…> block is not a JSON object"),
    ],
)
def test_unusable_decisions(reply: str, problem: str) -> None:
    found, problems = parse_decision(reply, NONCE)
    assert found is None and problem in problems


def test_decision_record_matches_the_schema() -> None:
    found, _ = parse_decision(decision("approved", tag=TAG), NONCE)
    assert found is not None
    record = decision_record(
        found,
        review_id="r",
        rounds=1,
        max_rounds=3,
        skill="s",
        vision_source="v",
        suite=None,
        qa_report=None,
        round_decisions=["approved"],
    )
    assert validate_record(record) == []
    assert validate_record({**record, "decision": "maybe"})


def test_parse_models() -> None:
    assert parse_models("orchestrator=a, builder=b") == {"orchestrator": "a", "builder": "b"}
    with pytest.raises(UsageError, match="unknown role 'qa'"):
        parse_models("qa=x")
    with pytest.raises(UsageError, match="must be ROLE=MODEL"):
        parse_models("builder")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--mock-replies", "{missing}"], "mock replies file not found"),
        (["--mock-replies", "{bad_role}"], "qa: unknown role"),
        (["--mock-replies", "{ok}", "--max-rounds", "0"], "--max-rounds must be at least 1"),
        (["--mock-replies", "{ok}", "--output-suite", "{full}"], "exists and is not an empty"),
        (["--mock-replies", "{ok}", "--roles-dir", "{missing}"], "not a directory"),
        (["--models", "qa=x"], "unknown role 'qa'"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    skill = review_skill(tmp_path)
    full = tmp_path / "full"
    full.mkdir()
    (full / "x").write_text("x", encoding="utf-8")
    paths = {
        "missing": str(tmp_path / "missing"),
        "full": str(full),
        "ok": str(write_replies(tmp_path / "ok.yaml", {"builder": []})),
        "bad_role": str(write_replies(tmp_path / "bad.yaml", {"qa": []})),
    }
    code, out, err = run_cli(
        "review",
        str(skill),
        "--state-root",
        str(tmp_path / "s"),
        "--mock",
        *[a.format(**paths) for a in args],
    )
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_a_skill_without_a_vision_is_bad_input(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "quiet")
    text = (skill / "SKILL.md").read_text(encoding="utf-8")
    (skill / "SKILL.md").write_text(text.replace("description: test skill\n", ""), encoding="utf-8")
    code, _out, err = run_cli("review", str(skill), "--state-root", str(tmp_path / "s"), "--mock")
    assert code == 2 and err.startswith("Error: ") and len(err.strip().splitlines()) == 1


def _arm(task_id: str, passes: int, n: int, label: str) -> dict[str, object]:
    attempts = [
        {
            "status": "passed" if i < passes else "failed",
            "judge": {"details": "ok" if i < passes else f"{task_id} missed"},
        }
        for i in range(n)
    ]
    return {
        "task_id": task_id,
        "passed": passes > 0,
        "passes": passes,
        "errors": 0,
        "stats": {"n": n, "label": label},
        "attempts": attempts,
    }


def test_qa_report_lists_flaky_regressed_and_uncovered_items() -> None:
    artifact = {
        "evaluation": {
            "execution_pass_rate": 0.5,
            "baseline_pass_rate": 0.5,
            "delta": 0.0,
            "verdict": "fail",
        },
        "candidate_results": [_arm("a", 1, 2, "flaky"), _arm("b", 0, 2, "stable_fail")],
        "baseline_results": [_arm("a", 0, 2, "stable_fail"), _arm("b", 2, 2, "stable_pass")],
    }
    result = review.qa_result_from_artifact(artifact, "art.json")
    assert result.flaky == ["a"] and result.regressed == ["b"]
    assert result.non_discriminating == []
    checklist, _ = parse_plan(plan())
    items = (
        *checklist.checklist,
        *parse_plan("## Builder tasks\n- [B1] (quality) x\n## QA checklist\n- [C2] (other) y\n")[
            0
        ].checklist,
    )
    links = {"a": {"checks": ["C1"], "builder_task": "B1"}, "b": {"checks": ["C1"]}}
    text, data = build_qa_report(items, links, result, 2)
    assert [(i["id"], i["outcome"], i["tasks"]) for i in data["checklist"]] == [
        ("C1", "FAIL", ["a", "b"]),
        ("C2", "NOT COVERED", []),
    ]
    assert "REGRESSION: only the baseline passes" in text
    assert "with skill passed (1/2), without failed (0/2): discriminates; flaky" in text
    assert "Evidence: with skill: b missed | without: ok" in text


def test_visionary_gate_retries_an_unusable_reply(tmp_path: Path) -> None:
    def qa(suite: Path, skill: Path, samples: int) -> QAResult:
        return QAResult((TaskQA("fact", True, False, 2, 0, 2),), 1.0, 0.0, 1.0, "pass")

    model = MockRoleModel(
        {
            "orchestrator": [plan()],
            "builder": [builder_reply(suite_files(True))],
            "visionary": ["I think it is fine.", decision("approved")],
        }
    )
    outcome = review.run_review(
        review.read_goal(review_skill(tmp_path)),
        model=model,
        roles=review.load_roles(),
        qa_fn=qa,
        state_root=tmp_path / "s",
    )
    assert outcome.record["decision"] == "approved"
    retry = (outcome.directory / "round-1/visionary.attempt-2.input.md").read_text()
    assert "- the reply holds no <decision-…> block" in retry and "# QA report" in retry
    first = (outcome.directory / "round-1/visionary.input.md").read_text()
    tags = [re.findall(r"<(decision-[0-9a-f]{32})>", t)[-1] for t in (first, retry)]
    assert tags[0] != tags[1]  # a fresh nonce for every call
