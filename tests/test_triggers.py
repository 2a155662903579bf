"""Trigger suites without a model: loading and validating `{id, query, should_trigger}`, the
implied judge, the figures (TPR, FPR, accuracy, intervals, paired policy), mixed suites
reported apart, `--mock-outputs` scripting `{triggered}`, the no-skill baseline refused, and
the Claude Code executor's options for a trigger attempt. The real CLI: test_triggers_e2e.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.failure import Failure
from skill_eval.core.model import (
    Attempt,
    ExecutionRequest,
    ExecutionResult,
    JudgeResult,
    Skill,
    Task,
)
from skill_eval.core.work import ToolCall, Work
from skill_eval.engine import artifact as artifact_mod
from skill_eval.errors import SuiteError
from skill_eval.executors.base import ExecutorBase, create_executor
from skill_eval.executors.catalog import invokes_skill, skill_invocations
from skill_eval.executors.claude.config import ClaudeCliConfig
from skill_eval.executors.claude.executor import ClaudeCodeExecutor, watched_outcome
from skill_eval.executors.claude.stream import StreamReader
from skill_eval.executors.mock_work import check_output
from skill_eval.inputs.suite import load_suite
from skill_eval.judges.base import JudgeContext, build_judge, run_judge
from skill_eval.judges.triggers import figures
from skill_eval.judges.triggers.role import TRIGGERS
from skill_eval.judges.triggers.tasks import implied_judge
from tests.helpers import contains_task, run_cli, write_outputs, write_skill, write_suite

QUERIES = [
    {"id": "yes-1", "query": "make a pdf", "should_trigger": True},
    {"id": "yes-2", "query": "pdf of my notes", "should_trigger": True},
    {"id": "no-1", "query": "tell a joke", "should_trigger": False},
    {"id": "no-2", "query": "what time is it", "should_trigger": False},
]


def judge_trigger(task: Task, calls: list[ToolCall], meta: dict[str, Any]) -> JudgeResult:
    """The implied judge of `task` as a run judges it: through the registry, reading the
    attempt's transcript and record (`work.meta`)."""
    work = Work(transcript=tuple(calls), meta=meta)
    return run_judge(build_judge(task.judge), task, work, JudgeContext(Path(".")))


def test_trigger_tasks_load_with_their_implied_judge(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path, [*QUERIES, contains_task("plain", "x")]))
    task = suite.task("yes-1")
    assert (task.query, task.should_trigger, task.is_trigger_task, task.prompt) == (
        "make a pdf",
        True,
        True,
        "make a pdf",
    )
    assert task.judge == {"type": "skill-triggered", "should_trigger": True}
    assert task.execution_settings().stop_on_skill and task.execution_settings().tools
    assert not suite.task("plain").is_trigger_task and suite.task("plain").query is None


def test_bad_trigger_tasks_are_located(tmp_path: Path) -> None:
    path = tmp_path / "task_suite.yaml"
    path.write_text(
        'skill_id: s\nversion: "1.0"\ntasks:\n'
        '  - {id: a, query: q, should_trigger: "yes"}\n'
        "  - {id: b, should_trigger: true}\n"
        "  - {id: c, query: q, should_trigger: false, prompt: p}\n"
        "  - {id: d, query: q}\n",
        encoding="utf-8",
    )
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    shown = [str(p) for p in caught.value.problems]
    assert any(":4:" in s and '"a").should_trigger: must be true or false' in s for s in shown)
    assert any(":5:" in s and '"b").query: is required' in s for s in shown)
    assert any(":6:" in s and '"c").prompt: not allowed in a trigger task' in s for s in shown)
    assert any(":7:" in s and '"d").should_trigger: is required' in s for s in shown)
    code, out, err = run_cli("validate", str(path))
    assert code != 0 and "Traceback" not in out + err


def test_the_stop_and_the_transcript_agree_on_what_invokes_a_skill() -> None:
    """The stream reader stops a trigger attempt where transcript.skill_invocations would
    count: one rule."""
    calls = [
        ("Skill", {"skill": "pdf"}),
        ("Skill", {"skill": "tools:pdf"}),
        ("Skill", {"skill": "pdfx"}),
        ("Skill", {"skill": ""}),
        ("Skill", {}),
        ("Read", {"file_path": "/w/.claude/skills/pdf/SKILL.md"}),
        ("Read", {"file_path": "/w/.claude/skills/pdfx/SKILL.md"}),
        ("Read", {"file_path": "/w/a.pdf"}),
        ("Read", {"file_path": "skills/pdf/SKILL.md"}),
        ("Write", {"file_path": "/w/.claude/skills/pdf/SKILL.md"}),
    ]
    for name, tool_input in calls:
        expected = bool(skill_invocations([ToolCall(name, tool_input)], "pdf", plugin_names=False))
        assert invokes_skill(name, tool_input, "pdf") is expected, (name, tool_input)
    # a plugin's skill of the same name is another skill: neither stops nor triggers
    assert not invokes_skill("Skill", {"skill": "tools:pdf"}, "pdf")
    task = Task(
        id="q",
        prompt="make a pdf",
        judge=implied_judge(True),
        query="make a pdf",
        should_trigger=True,
    )
    judged = judge_trigger(
        task, [ToolCall("Skill", {"skill": "tools:pdf"})], {"trigger_skill": "pdf"}
    )
    assert not judged.passed and judged.data["triggered"] is False


def test_judge_names_the_query_and_needs_the_skill_name(tmp_path: Path) -> None:
    task = load_suite(write_suite(tmp_path, QUERIES)).task("yes-1")
    missed = judge_trigger(
        task, [ToolCall("Read", {"file_path": "a.pdf"})], {"trigger_skill": "pdf"}
    )
    assert not missed.passed and missed.error is None
    assert (
        missed.details == "query 'make a pdf' should trigger skill 'pdf', but the skill "
        "was not invoked"
    )
    hit = judge_trigger(task, [ToolCall("Skill", {"skill": "pdf"})], {"trigger_skill": "pdf"})
    assert hit.passed and hit.data["triggered"] is True
    assert judge_trigger(task, [], {}).error is not None  # never "not triggered" by default


def test_outcome_turn_limit_is_judged_timeout_and_api_errors_stay_errors() -> None:
    turns = ExecutionResult(
        failure=Failure.output("claude CLI error: max turns"),
        meta={"subtype": "error_max_turns"},
    )
    assert watched_outcome(turns).failure is None
    timeout = ExecutionResult(failure=Failure.output("timed out", retry=True))
    assert watched_outcome(timeout).failure.message == "timed out"
    assert (
        watched_outcome(timeout).failure.ends_as != "failed"
        and watched_outcome(timeout).failure.retry
    )
    # The 529 stream the CLI sends: the "API Error" text is not the model's answer.
    overloaded = read_stream(
        {
            "type": "assistant",
            "message": {"content": [{"type": "text", "text": "API Error: 529 Overloaded"}]},
        },
        {
            "type": "result",
            "subtype": "success",
            "is_error": True,
            "api_error_status": 529,
            "result": "API Error: 529 Overloaded",
        },
    )
    assert (
        overloaded.failure.message
        and overloaded.failure.retry
        and "529" in overloaded.failure.message
    )
    assert watched_outcome(overloaded).failure.message == overloaded.failure.message
    use = {"type": "tool_use", "id": "t1", "name": "Skill", "input": {"skill": "pdf"}}
    stopped = read_stream({"type": "assistant", "message": {"content": [use]}}, stop_at="pdf")
    assert stopped.failure is None and [c.name for c in stopped.transcript] == ["Skill"]


def read_stream(*events: dict[str, Any], stop_at: str | None = None) -> ExecutionResult:
    reader = StreamReader(stop_at_skill=stop_at)
    for event in events:
        if not reader.feed(json.dumps(event).encode()):
            return reader.result(None, "")
    return reader.result(0, "")


def _attempt(arm: str, task_id: str, index: int, triggered: bool | None) -> Attempt:
    if triggered is None:
        return Attempt(arm, task_id, index, "error", "", None, "HTTP 529", 0)
    judge = JudgeResult(True, 1.0, data={"triggered": triggered})
    return Attempt(arm, task_id, index, "passed", "", judge, None, 0)


def test_figures_rates_intervals_and_errors_apart(tmp_path: Path) -> None:
    tasks = load_suite(write_suite(tmp_path, QUERIES)).tasks
    attempts = [
        _attempt("candidate", "yes-1", 0, True),
        _attempt("candidate", "yes-1", 1, True),
        _attempt("candidate", "yes-2", 0, True),
        _attempt("candidate", "yes-2", 1, False),
        _attempt("candidate", "no-1", 0, False),
        _attempt("candidate", "no-1", 1, None),
        _attempt("candidate", "no-2", 0, None),
        _attempt("candidate", "no-2", 1, None),
        *(_attempt("baseline", t["id"], i, False) for t in QUERIES for i in range(2)),
    ]
    data = figures.section(
        tasks,
        attempts,
        ["candidate", "baseline"],
        samples=2,
        policy="delta",
        min_delta=0.0,
        margin=None,
    )
    assert data is not None
    cand = data["arms"]["candidate"]
    assert [q["trigger_rate"] for q in cand["queries"]] == [1.0, 0.5, 0.0, None]
    assert cand["tpr"]["rate"] == 0.75 and cand["fpr"] == {**cand["fpr"], "rate": 0.0, "queries": 1}
    assert cand["accuracy"]["rate"] == pytest.approx(0.8333, abs=1e-4)
    assert cand["errors"] == 3  # errors are never counted as "not triggered"
    low, high = cand["tpr"]["interval"]
    assert 0.0 <= low < 0.75 < high <= 1.0
    base = data["arms"]["baseline"]
    assert (base["tpr"]["rate"], base["fpr"]["rate"], base["accuracy"]["rate"]) == (0.0, 0.0, 0.5)
    comparison = data["comparison"]
    assert comparison["tpr"]["delta"] == 0.75 and comparison["policy"]["passed"] is True
    assert comparison["accuracy"]["excluded"] == ["no-2"]  # in error in the candidate
    assert (
        figures.failures(data)[0]
        == "candidate: query 'pdf of my notes' should trigger; triggered in 1 of 2 samples"
    )


def test_mixed_suite_mock_run_reports_triggers_apart(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", [*QUERIES, contains_task("plain", "Mock")])
    outputs = write_outputs(
        tmp_path / "mock.yaml",
        {
            "candidate": {"yes-1": {"triggered": True}, "yes-2": {"triggered": True}},
            "baseline": {"yes-1": {"triggered": True}, "no-1": {"triggered": True}},
        },
    )
    out = tmp_path / "a.json"
    old = write_skill(tmp_path / "old" / "pdf", "Older body.")
    code, _, err = run_cli(
        "run",
        "--standalone",
        "--mock",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(write_skill(tmp_path / "pdf")),
        "--baseline-skill",
        str(old),
        "--mock-outputs",
        str(outputs),
        "--state-root",
        str(tmp_path / "st"),
        "--policy",
        "delta",
        "--output",
        str(out),
    )
    data = json.loads(out.read_text())
    artifact_mod.validate(data)
    # The pass rates cover the ordinary task only; every task is still listed.
    assert (data["evaluation"]["execution_pass_rate"], data["evaluation"]["delta"]) == (1.0, 0)
    assert len(data["candidate_results"]) == 5
    triggers = data["triggers"]["arms"]
    assert (triggers["candidate"]["tpr"]["rate"], triggers["candidate"]["fpr"]["rate"]) == (
        1.0,
        0.0,
    )
    assert (triggers["baseline"]["tpr"]["rate"], triggers["baseline"]["fpr"]["rate"]) == (0.5, 0.5)
    assert code == 0 and data["evaluation"]["verdict"] == "pass", err
    assert "triggers" in err and "TPR 1.00" in err  # the end-of-run table
    assert "(1/1)" in err and "(1/5)" not in err  # counts over the ordinary task, as the rate
    # A worse candidate description fails a mixed suite even though its ordinary tasks pass.
    worse = write_outputs(
        tmp_path / "worse.yaml",
        {"candidate": {}, "baseline": {"yes-1": {"triggered": True}, "yes-2": {"triggered": True}}},
    )
    code, _, err = run_cli(
        "run",
        "--standalone",
        "--mock",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(tmp_path / "pdf"),
        "--baseline-skill",
        str(tmp_path / "old" / "pdf"),
        "--mock-outputs",
        str(worse),
        "--state-root",
        str(tmp_path / "st"),
        "--policy",
        "delta",
        "--output",
        str(out),
    )
    data = json.loads(out.read_text())
    assert code != 0 and data["evaluation"]["verdict"] == "fail"
    assert data["evaluation"]["reason"].startswith("trigger tasks: ")
    code, junit, _ = run_cli("report", str(out), "--format", "junit")
    assert "query 'make a pdf' should trigger skill 'pdf'" in junit


def test_no_skill_baseline_is_refused(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", QUERIES)
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--mock",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(write_skill(tmp_path / "pdf")),
        "--state-root",
        str(tmp_path / "st"),
    )
    assert code != 0 and "Traceback" not in err
    (line,) = [x for x in err.splitlines() if x.startswith("Error:")]
    assert "--baseline-skill" in line and "pipeline mode" in line
    assert not (tmp_path / "st" / "runs").exists()  # refused before any attempt
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--mock",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(tmp_path / "pdf"),
        "--baseline-skill",
        str(write_skill(tmp_path / "old" / "pdf")),
        "--samples",
        "3",
        "--early-stop",
        "--state-root",
        str(tmp_path / "st"),
    )
    assert code == 2 and "Traceback" not in err
    assert "trigger tasks: --early-stop decides from pass rates" in err


def test_mock_outputs_check_triggered(tmp_path: Path) -> None:
    assert check_output({"triggered": True}) is None
    assert check_output({"triggered": "yes"}) == "triggered: must be true or false"
    suite = load_suite(write_suite(tmp_path, QUERIES))
    # by what the executor declares (ExecutorBase.can_trigger), never by its name
    assert (
        TRIGGERS.executor_problem(create_executor("anthropic"), "anthropic", suite.tasks)
        is not None
    )
    assert TRIGGERS.executor_problem(create_executor("mock"), "mock", suite.tasks) is None
    acting = type("Acting", (ExecutorBase,), {"can_act": True})()  # acts, cannot tell
    assert "trigger task" in (TRIGGERS.executor_problem(acting, "plugin", suite.tasks) or "")
    watching = type("Watching", (ExecutorBase,), {"can_trigger": True})()
    assert TRIGGERS.executor_problem(watching, "plugin", suite.tasks) is None


def test_claude_code_options_of_a_trigger_attempt(tmp_path: Path) -> None:
    """Installed under .claude/skills whatever --skill-mode says, project settings only, the
    read-only tools with Skill, 8 turns by default (the task's own limit wins)."""
    task = load_suite(write_suite(tmp_path, QUERIES)).task("yes-1")
    executor = ClaudeCodeExecutor(ClaudeCliConfig(skill_mode="system"))
    request = ExecutionRequest(task, "candidate", 0, Skill("pdf", "---\nname: pdf\n---\n"), 60)
    plan = executor.tool_plan(request)
    args = executor.arguments(plan, request)
    assert "--setting-sources=project" in args
    assert args[args.index("--max-turns") + 1] == "8"
    assert "--disable-slash-commands" not in args
    assert "Skill" in plan.tools and "Skill" in plan.allowed
    assert "Write" not in plan.tools


def test_bundled_trigger_demo_dry_runs(tmp_path: Path) -> None:
    demo = Path(__file__).resolve().parent.parent / "task_suites" / "demo-triggers"
    out = tmp_path / "a.json"
    code, _, err = run_cli(
        "run",
        "--standalone",
        "--mock",
        "--task-suite",
        str(demo),
        "--skill-path",
        str(demo / "skill" / "pdf-tools"),
        "--baseline-skill",
        str(demo / "baseline" / "pdf-tools"),
        "--mock-outputs",
        str(demo / "mock_outputs.yaml"),
        "--state-root",
        str(tmp_path / "st"),
        "--output",
        str(out),
    )
    assert code == 0, err
    data = json.loads(out.read_text())
    arms = data["triggers"]["arms"]
    assert [arms["candidate"][k]["rate"] for k in ("tpr", "fpr", "accuracy")] == [1.0, 0.0, 1.0]
    assert [arms["baseline"][k]["rate"] for k in ("tpr", "fpr", "accuracy")] == [0.5, 0.25, 0.625]
    assert data["triggers"]["comparison"]["policy"]["passed"] is True
    code, html, err = run_cli("report", str(out), "--format", "html")
    assert code == 0, err
    assert "candidate TPR 1.00" in html and "baseline TPR 0.50" in html


def test_rejudge_judges_trigger_attempts_the_same_way(tmp_path: Path) -> None:
    """The skill whose invocation counts is in each attempt's record, so a rejudge of the
    journal gives the same figures."""
    demo = Path(__file__).resolve().parent.parent / "task_suites" / "demo-triggers"
    out = tmp_path / "a.json"
    code, _, err = run_cli(
        "run",
        "--standalone",
        "--mock",
        "--task-suite",
        str(demo),
        "--skill-path",
        str(demo / "skill" / "pdf-tools"),
        "--baseline-skill",
        str(demo / "baseline" / "pdf-tools"),
        "--mock-outputs",
        str(demo / "mock_outputs.yaml"),
        "--state-root",
        str(tmp_path / "st"),
        "--output",
        str(out),
    )
    assert code == 0, err
    (run_dir,) = (tmp_path / "st" / "runs").iterdir()
    again = tmp_path / "b.json"
    code, _, err = run_cli("rejudge", str(run_dir), "--output", str(again))
    assert code == 0, err
    first, second = json.loads(out.read_text()), json.loads(again.read_text())
    assert second["triggers"]["arms"] == first["triggers"]["arms"]
    assert second["evaluation"]["verdict"] == "pass"


def test_trigger_errors_never_profit_the_candidate() -> None:
    """Queries the candidate lost to errors are left out of its rates, but a pass must hold
    with them counted against it (as the pass-rate verdict's guard does)."""

    def query(i: int, triggered: int, errors: int) -> dict[str, Any]:
        samples = 1 - errors
        return {
            "id": f"q{i}",
            "query": f"q{i}",
            "should_trigger": True,
            "samples": samples,
            "triggered": triggered,
            "errors": errors,
            "trigger_rate": (triggered / samples) if samples else None,
        }

    base = {"errors": 0, "queries": [query(i, 1, 0) for i in range(10)]}
    clean = {"errors": 0, "queries": [query(i, 1, 0) for i in range(10)]}
    lost = {
        "errors": 3,
        "queries": [query(i, 1, 0) for i in range(7)] + [query(i, 0, 1) for i in range(7, 10)],
    }
    settings: dict[str, Any] = {"policy": "delta", "min_delta": 0.0, "margin": None, "samples": 1}
    assert figures.compare(clean, base, **settings)["policy"]["passed"]
    decided = figures.compare(lost, base, **settings)
    assert decided["accuracy"]["delta"] == 0.0  # the errored queries are out of the delta
    assert not decided["policy"]["passed"]
    assert (
        "3 candidate and 0 baseline trigger attempts ended in error"
        in decided["policy"]["reasoning"]
    )


def test_an_executor_that_can_trigger_runs_trigger_tasks_from_the_request_alone(
    tmp_path: Path,
) -> None:
    """No executor knows what a trigger task is: one that declares `can_trigger` gets how to
    run it in each request (the skill installed, the tools, the turn limit, stop on the
    skill), and the implied judge (through the registry) reads the skill the runner recorded."""
    from skill_eval.core.model import Arm
    from skill_eval.engine.evaluation import evaluate
    from skill_eval.judges.triggers.tasks import TRIGGER_EXECUTION

    seen: list[ExecutionRequest] = []

    class Watcher(ExecutorBase):
        name = "watcher"
        can_trigger = True

        def run(self, request: ExecutionRequest) -> ExecutionResult:
            seen.append(request)
            invoked = request.task.should_trigger and request.arm == "candidate"
            assert request.skill is not None
            calls = (ToolCall("Skill", {"skill": request.skill.name}),) if invoked else ()
            return ExecutionResult(output="done", transcript=calls)

    suite = load_suite(write_suite(tmp_path, [*QUERIES[:1], {**QUERIES[2], "max_turns": 3}]))
    skill = Skill("pdf", "---\nname: pdf\n---\n")
    result = evaluate(suite, [Arm("candidate", skill), Arm("baseline", skill)], Watcher())
    by_task = {r.task.id: r.settings for r in seen}
    assert by_task["yes-1"] == TRIGGER_EXECUTION
    assert by_task["no-1"].turns(None) == 3 and by_task["no-1"].stop_on_skill
    attempts = {(a.arm, a.task_id): a for a in result.attempts}
    assert attempts[("candidate", "yes-1")].meta["trigger_skill"] == "pdf"
    # baseline no-1, baseline yes-1 (not invoked: failed), candidate no-1, candidate yes-1
    assert [attempts[k].status for k in sorted(attempts)] == [
        "passed",
        "failed",
        "passed",
        "passed",
    ]
    judged = attempts[("baseline", "yes-1")].judge
    assert judged is not None and judged.data == {
        "triggered": False,
        "should_trigger": True,
        "skill": "pdf",
    }
    assert TRIGGERS.executor_problem(Watcher(), "watcher", suite.tasks) is None
