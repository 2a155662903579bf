"""`--batch`: every attempt of a run goes through the Message Batches API of the local fake
(real anthropic SDK): one batch, results mapped back by custom_id, half price, failed requests
retried in follow-up batches up to --max-retries, and a killed run resumed by polling the batch
it had sent (no second batch)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skill_eval import Arm, Skill, evaluate, load_suite
from skill_eval.engine.runner import Journal
from skill_eval.executors.anthropic_api import AnthropicConfig
from skill_eval.executors.base import create_executor
from skill_eval.executors.batches import BATCH_RECORD, BatchCounts, Polling, custom_id
from skill_eval.executors.pricing import load_price_table
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.batches import BATCH_REQUEST
from tests.helpers import (
    REPO,
    contains_task,
    graded_context,
    read_json,
    run_cli,
    write_skill,
    write_suite,
)

MARK = "BATCH-MARK-51c"
RULES = [{"system_contains": MARK, "text": "alpha beta"}]
MODEL = "claude-sonnet-4-5"  # priced, so the batch discount shows


def _suite(tmp_path: Path, tasks: int = 3):
    return load_suite(
        write_suite(tmp_path / "suite", [contains_task(f"t{i}", "alpha") for i in range(tasks)])
    )


def _arms() -> list[Arm]:
    return [Arm("candidate", Skill("demo", f"Say alpha. {MARK}")), Arm("baseline", None)]


def _executor(server: FakeAnthropic):
    return create_executor(
        "anthropic",
        AnthropicConfig(
            model=MODEL, base_url=server.base_url, batch=True, env={"ANTHROPIC_API_KEY": "k"}
        ),
    )


def _run(tmp_path: Path, server: FakeAnthropic, max_retries: int = 5):
    from skill_eval import Execution

    journal = Journal(tmp_path / "attempts.jsonl")
    try:
        return evaluate(
            _suite(tmp_path),
            _arms(),
            _executor(server),
            journal=journal,
            execution=Execution(max_retries=max_retries),
        ), journal
    finally:
        journal.close()


def test_a_run_sends_one_batch_and_no_direct_call(tmp_path: Path) -> None:
    with FakeAnthropic(rules=RULES, default="nothing", batch_seconds=0.3) as server:
        result, journal = _run(tmp_path, server)
    assert server.batches.creates == 1
    assert server.requests_to("/v1/messages") == []
    assert result.arm("candidate").pass_rate == 1.0 and result.arm("baseline").pass_rate == 0.0
    batch = next(iter(server.batches.batches.values()))
    assert len(batch.params) == 6 and batch.retrieved >= 2  # polled while in progress
    # each request's params carry its own arm's prompt: results map back by custom_id
    cid = custom_id("candidate", "t1", 0)
    assert MARK in json.dumps(batch.params[cid]["system"])
    assert "system" not in batch.params[custom_id("baseline", "t1", 0)]
    notes = journal.notes(BATCH_RECORD)
    assert [n["batch_id"] for n in notes] == [batch.id] and len(notes[0]["custom_ids"]) == 6
    assert len(journal.read()) == 6  # the note is not read as an attempt
    prices = load_price_table(None)
    for attempt in result.attempts:
        assert attempt.meta["batch_id"] == batch.id
        full = prices.cost(MODEL, attempt.usage)[0]
        assert full > 0 and attempt.cost_usd == pytest.approx(full / 2)


def test_failed_requests_go_out_again_in_a_follow_up_batch(tmp_path: Path) -> None:
    faults = [{"kind": "overloaded", "first": 2, "path": BATCH_REQUEST}]
    with FakeAnthropic(rules=RULES, default="nothing", faults=faults) as server:
        result, journal = _run(tmp_path, server)
    assert server.batches.creates == 2
    second = list(server.batches.batches.values())[1]
    assert len(second.params) == 2  # only the two that failed
    assert [n["round"] for n in journal.notes(BATCH_RECORD)] == [1, 2]
    assert not any(a.status == "error" for a in result.attempts)


def test_a_request_missing_from_the_results_is_a_failed_try_not_a_new_batch_forever(
    tmp_path: Path,
) -> None:
    faults = [{"kind": "malformed", "rate": 1.0, "path": BATCH_REQUEST}]  # never listed
    with FakeAnthropic(rules=RULES, default="nothing", faults=faults) as server:
        result, _ = _run(tmp_path, server, max_retries=2)
    assert server.batches.creates == 3  # the first batch and two follow-ups, then it stops
    assert {a.status for a in result.attempts} == {"error"}
    assert all("has no result for this request" in (a.error or "") for a in result.attempts)


def test_requests_out_of_retries_or_invalid_end_as_errors(tmp_path: Path) -> None:
    faults = [
        {"kind": "overloaded", "nth": 1, "path": BATCH_REQUEST},
        {"kind": "overloaded", "nth": 7, "path": BATCH_REQUEST},
    ]
    with FakeAnthropic(rules=RULES, default="nothing", faults=faults) as server:
        result, _ = _run(tmp_path, server, max_retries=1)
    assert server.batches.creates == 2  # the first request failed in both: 1 retry only
    errors = [a for a in result.attempts if a.status == "error"]
    assert len(errors) == 1 and "overloaded_error" in (errors[0].error or "")
    assert errors[0].tries == 1  # kept as it came: not retried by a direct call
    assert server.requests_to("/v1/messages") == []
    # a reply the fake cannot fill ({cwd} of a request stating none): invalid_request_error
    with FakeAnthropic(
        rules=[{"system_contains": MARK, "text": "{cwd}/x"}], default="nothing"
    ) as server:
        result, _ = _run(tmp_path / "again", server)
    assert server.batches.creates == 1  # a request that cannot succeed is not sent again
    assert sum(a.status == "error" for a in result.attempts) == 3


def test_rubric_judgements_go_out_as_a_second_batch(tmp_path: Path) -> None:
    from skill_eval import Execution
    from skill_eval.judges.judge_cache import MemoryJudgeCache
    from skill_eval.judges.llm_rubric import TOOL_NAME

    judge = {"type": "llm-rubric", "rubric": "Says alpha.", "pass_threshold": 0.5}
    suite = load_suite(
        write_suite(
            tmp_path / "suite",
            [{"id": f"t{i}", "prompt": f"Do t{i}", "judge": judge} for i in range(3)],
        )
    )
    rules = [
        {
            "tool_choice_name": TOOL_NAME,
            "messages_contain": "alpha beta",
            "tool_input": {"reasoning": "says alpha", "score": 0.9},
        },
        {"tool_choice_name": TOOL_NAME, "text": "no tool call, no tags"},
        *RULES,
    ]
    with FakeAnthropic(rules=rules, default="nothing") as server:
        ctx = graded_context(
            suite.directory,
            "anthropic",
            env={"ANTHROPIC_API_KEY": "k"},
            cache=MemoryJudgeCache(),
            options={"base_url": server.base_url, "max_retries": 0},
        )
        journal = Journal(tmp_path / "attempts.jsonl")
        result = evaluate(
            suite,
            _arms(),
            _executor(server),
            journal=journal,
            judge_context=ctx,
            execution=Execution(max_retries=0),
        )
        journal.close()
    assert server.batches.creates == 2
    # the answers that were not judgements (baseline) went out live, after the batch
    judged, second = list(server.batches.batches.values())[1], journal.notes()
    assert len(judged.params) == 6 and all(
        p["tool_choice"]["name"] == TOOL_NAME for p in judged.params.values()
    )
    assert [n["record"] for n in second] == ["batch", "judge-batch"]
    assert server.requests_to("/v1/messages") == []  # every judgement came from the batch
    candidate = result.arm("candidate")
    assert candidate.pass_rate == 1.0
    assert all(a.judge and a.judge.score == 0.9 for a in candidate.attempts)
    baseline = result.arm("baseline").attempts
    assert all(a.status == "error" and "no tool call" in (a.error or "") for a in baseline)


def test_evaluator_rubric_judgements_go_out_as_a_second_batch_too(tmp_path: Path) -> None:
    from skill_eval import Execution
    from skill_eval.judges.judge_cache import MemoryJudgeCache
    from skill_eval.judges.rubric import REGISTRIES

    REGISTRIES.clear()
    judge = {"type": "rubric", "evaluator": "code-review"}
    suite = load_suite(
        write_suite(
            tmp_path / "suite",
            [
                {
                    "id": f"t{i}",
                    "prompt": f"Write add() number {i}",
                    "category": "code",
                    "judge": judge,
                }
                for i in range(2)
            ],
        )
    )
    scores = {"correctness": 0.9, "safety": 0.8, "style": 0.9, "completeness": 0.7}
    rules = [
        {
            "tool_choice_name": "submit_evaluation",
            "tool_input": {"scores": scores, "findings": [], "suggestion": "Add type hints."},
        },
        *RULES,
    ]
    with FakeAnthropic(rules=rules, default="nothing") as server:
        ctx = graded_context(
            suite.directory,
            "anthropic",
            env={"ANTHROPIC_API_KEY": "k"},
            cache=MemoryJudgeCache(),
            options={
                "base_url": server.base_url,
                "max_retries": 0,
                "project_dir": str(tmp_path),
            },
        )
        journal = Journal(tmp_path / "attempts.jsonl")
        result = evaluate(
            suite,
            _arms(),
            _executor(server),
            journal=journal,
            judge_context=ctx,
            execution=Execution(max_retries=0),
        )
        journal.close()
    REGISTRIES.clear()
    assert server.batches.creates == 2
    judged = list(server.batches.batches.values())[1]
    assert len(judged.params) == 4 and all(
        p["tool_choice"]["name"] == "submit_evaluation" for p in judged.params.values()
    )
    assert [n["record"] for n in journal.notes()] == ["batch", "judge-batch"]
    assert server.requests_to("/v1/messages") == []  # every evaluation came from the batch
    for attempt in result.attempts:
        assert attempt.judge is not None and attempt.judge.error is None, attempt.error
        dims = {d["name"]: d["raw_score"] for d in attempt.judge.data["evaluation"]["dimensions"]}
        assert dims == scores


def test_counts_and_polling() -> None:
    delays = Polling(first=1, factor=2, cap=5).delays()
    assert [next(delays) for _ in range(5)] == [1, 2, 4, 5, 5]
    assert custom_id("candidate", "a task/with spaces", 3) != custom_id("candidate", "a", 3)
    assert len(custom_id("c", "x" * 500, 0)) <= 64
    text = BatchCounts("msgbatch_1", "in_progress", processing=4).describe()
    assert text == (
        "batch msgbatch_1: in_progress, 4 processing, 0 succeeded, 0 errored, 0 canceled or expired"
    )


def test_progress_prints_batch_counts_when_they_change() -> None:
    import io

    from skill_eval.engine.progress import Progress

    out = io.StringIO()
    progress = Progress({"candidate": 2}, stream=out)
    for counts in (
        BatchCounts("b1", "in_progress", processing=2),
        BatchCounts("b1", "in_progress", processing=2),
        BatchCounts("b1", "ended", succeeded=1, errored=1),
    ):
        progress.batch(counts)
    assert out.getvalue().splitlines() == [
        "batch b1: in_progress, 2 processing, 0 succeeded, 0 errored, 0 canceled or expired",
        "batch b1: ended, 0 processing, 1 succeeded, 1 errored, 0 canceled or expired",
    ]


def test_batch_needs_the_anthropic_executor(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", [contains_task("t0", "alpha")])
    skill = write_skill(tmp_path / "skill")
    code, _, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--state-root",
        str(tmp_path / "s"),
        "--mock",
        "--batch",
    )
    assert code != 0 and "Traceback" not in err
    assert "--batch" in err and "--executor anthropic" in err and "(got mock)" in err


def test_batch_refuses_the_ray_runner(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", [contains_task("t0", "alpha")])
    skill = write_skill(tmp_path / "skill")
    code, _, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--state-root",
        str(tmp_path / "s"),
        "--executor",
        "anthropic",
        "--batch",
        "--runner",
        "ray",
    )
    assert code == 2 and "Traceback" not in err
    assert "--batch and --runner ray do not mix" in err


def _batch_args(tmp_path: Path) -> list[str]:
    suite = write_suite(tmp_path / "suite", [contains_task(f"t{i}", "alpha") for i in range(3)])
    skill = write_skill(tmp_path / "skill", f"Say alpha. {MARK}")
    return [
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--state-root",
        str(tmp_path / "state"),
        "--executor",
        "anthropic",
        "--model",
        MODEL,
        "--policy",
        "delta",
        "--batch",
    ]


def _start_and_stop(
    tmp_path: Path, args: list[str], env: dict[str, str], sig: int
) -> tuple[Path | None, int, str]:
    """Start a batch run, send `sig` once its batch id is journaled: (journal, code, stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "skill_eval.cli", *args],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    journal, deadline = None, time.monotonic() + 180  # polled: generous for a loaded machine
    while journal is None and time.monotonic() < deadline:
        found = list((tmp_path / "state" / "runs").glob("*/attempts.jsonl"))
        if found and BATCH_RECORD in found[0].read_text():
            journal = found[0]
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    return journal, proc.returncode, err


@pytest.mark.slow
def test_ctrl_c_while_polling_leaves_the_batch_running(tmp_path: Path) -> None:
    with FakeAnthropic(rules=RULES, default="nothing", batch_seconds=600) as server:
        env = {**os.environ, "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "k"}
        journal, code, err = _start_and_stop(tmp_path, _batch_args(tmp_path), env, signal.SIGINT)
        assert journal is not None and code == 130, err
        assert "--resume" in err and "Traceback" not in err
        batch = next(iter(server.batches.batches.values()))
        assert batch.canceled_at is None  # left for --resume to collect


def test_a_killed_batch_run_resumes_the_same_batch(tmp_path: Path) -> None:
    args = _batch_args(tmp_path)
    with FakeAnthropic(rules=RULES, default="nothing", batch_seconds=600) as server:
        env = {**os.environ, "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "k"}
        journal, _, err = _start_and_stop(tmp_path, args, env, signal.SIGKILL)
        assert journal is not None, err
        assert server.batches.creates == 1
        for batch in server.batches.batches.values():  # the service finishes it meanwhile
            batch.ends = time.time()
        resumed = subprocess.run(
            [sys.executable, "-m", "skill_eval.cli", *args, "--resume"],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert resumed.returncode == 0, resumed.stderr
        assert server.batches.creates == 1  # polled the same batch, sent none again
        assert server.requests_to("/v1/messages") == []
        assert "batch msgbatch_fake_" in resumed.stderr and " ended, " in resumed.stderr
        data = read_json(resumed.stdout.strip())
        assert data["manifest"]["run_dir"] == str(journal.parent)
        assert data["evaluation"]["execution_pass_rate"] == 1.0
