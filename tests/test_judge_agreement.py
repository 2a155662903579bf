"""Runs measure their judges (issue 31): a model-graded judge that judges the same output more
than once (identical outputs of a run, a rejudge) has its agreement recorded in the artifact,
and the HTML report shows the tasks whose judge disagreed with itself."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skill_eval.engine import artifact
from skill_eval.judges.llm_rubric import TOOL_NAME
from skill_eval.report.html import render_html
from skill_eval.stats.agreement import Agreement, agreement, disagrees, served_from_cache
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import read_json, run_cli, write_outputs, write_skill, write_suite
from tests.test_report_html import page


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        ([], Agreement()),
        ([[(True, 0.9)]], Agreement()),  # judged once: says nothing
        ([[(True, 0.9), (True, 0.8)]], Agreement(1, 2, 1, 1, 0.1, 0)),
        ([[(True, 0.9), (False, 0.2), (True, 0.9)]], Agreement(1, 3, 3, 1, 0.7, 1)),
        ([[(False, 0.1), (False, 0.6)]], Agreement(1, 2, 1, 1, 0.5, 1)),  # too far apart
        (
            [[(True, 1.0), (True, 1.0)], [(False, 0.0), (True, 1.0), (True, 1.0), (False, 0.0)]],
            Agreement(2, 6, 7, 3, 1.0, 1),
        ),
    ],
)
def test_agreement_is_pairwise_over_outputs_judged_more_than_once(
    groups: list[list[tuple[bool, float]]], expected: Agreement
) -> None:
    got = agreement(groups)
    counts = ("outputs", "judgements", "pairs", "agreeing_pairs", "disagreeing_outputs")
    assert [getattr(got, c) for c in counts] == [getattr(expected, c) for c in counts]
    assert got.score_spread == pytest.approx(expected.score_spread)
    assert got.consistent is (expected.disagreeing_outputs == 0)


def test_rate_and_disagreement() -> None:
    assert agreement([[(True, 0.9), (False, 0.2), (True, 0.9)]]).rate == pytest.approx(1 / 3)
    assert Agreement().rate is None
    assert not disagrees([(True, 0.9)]) and disagrees([(True, 0.9), (False, 0.9)])


def test_a_cached_judgement_is_found_inside_a_combination() -> None:
    assert served_from_cache({"judges": [{"data": {}}, {"data": {"cached": True}}]})
    assert not served_from_cache({"judges": [{"data": {"cached": False}}], "cached": "yes"})


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A judge that grades FLAKY 0.9, then 0.2 once, then 0.9; everything else 0.9."""
    with FakeAnthropic() as server:
        reply = {"tool_choice_name": TOOL_NAME}
        server.set_rules(
            [
                {**reply, "messages_contain": "FLAKY", "times": 1, "tool_input": {"score": 0.9}},
                {**reply, "messages_contain": "FLAKY", "times": 1, "tool_input": {"score": 0.2}},
                {**reply, "tool_input": {"reasoning": "fine", "score": 0.9}},
            ]
        )
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        yield server


def graded(task_id: str) -> dict[str, Any]:
    return {
        "id": task_id,
        "prompt": f"Notes for {task_id}",
        "judge": {"type": "llm-rubric", "rubric": "Lists the change."},
        "reference": "## Added\n- the change",
    }


def run(tmp_path: Path, *extra: str) -> tuple[dict[str, Any], Path]:
    """Both arms give each task the same output twice: 4 judgements of one output per task."""
    suite = write_suite(
        tmp_path / "suite",
        [
            graded("flaky"),
            graded("steady"),
            {"id": "plain", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}},
        ],
    )
    outputs = write_outputs(
        tmp_path / "o.yaml", {"flaky": "FLAKY notes", "steady": "steady notes", "plain": "x"}
    )
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--state-root",
        str(tmp_path / "state"),
        "--executor",
        "mock",
        "--mock-outputs",
        str(outputs),
        "--judge-executor",
        "anthropic",
        "--samples",
        "2",
        "--concurrency",
        "1",
        "-q",
        *extra,
    )
    assert out.strip(), err
    data = read_json(out.strip())
    artifact.validate(data)
    return data, Path(data["manifest"]["run_dir"])


def by_task(section: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["task_id"]: t for t in section["tasks"]}


def test_identical_outputs_judged_afresh_measure_the_judge(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    data, _ = run(tmp_path, "--no-judge-cache")
    section = data["judge_agreement"]
    tasks = by_task(section)
    assert set(tasks) == {"flaky", "steady"}  # the contains task asks no model
    # one output judged 4 times, one of them 0.2: 3 of 6 pairs agree
    assert tasks["flaky"] == {
        "task_id": "flaky",
        "outputs": 1,
        "judgements": 4,
        "pairs": 6,
        "agreement": 0.5,
        "score_spread": pytest.approx(0.7),
        "disagreeing_outputs": 1,
        "cached": 0,
    }
    assert tasks["steady"]["agreement"] == 1.0 and tasks["steady"]["disagreeing_outputs"] == 0
    assert section["disagreeing_tasks"] == ["flaky"]
    assert (section["outputs"], section["judgements"], section["pairs"]) == (2, 8, 12)
    assert section["agreement"] == pytest.approx(9 / 12)
    # the HTML report tags the task and says why
    html = render_html(data)
    tags = {t["data-task"]: t["data-tags"].split() for t in page(html).tasks}
    assert "judge-disagrees" in tags["flaky"] and "judge-disagrees" not in tags["steady"]
    assert 'data-filter="judge-disagrees">judge disagrees (1)' in html
    assert (
        "judge agreement: 1 output(s) judged more than once (4 judgements): 50% of pairs "
        "agree, scores up to 0.70 apart; 1 output(s) judged inconsistently"
    ) in html


def test_cached_judgements_are_copies_and_do_not_count(tmp_path: Path, fake: FakeAnthropic) -> None:
    data, run_dir = run(tmp_path)
    tasks = by_task(data["judge_agreement"])
    assert tasks["flaky"]["outputs"] == 0 and tasks["flaky"]["agreement"] is None
    assert tasks["flaky"]["judgements"] == 0 and tasks["flaky"]["cached"] == 3
    assert len(fake.requests_to("/v1/messages")) == 2  # one real judgement per output
    assert "no output was judged twice; 3 judgement(s) came from the judge cache" in (
        render_html(data)
    )
    # rejudged afresh: each output's first judgement beside its 4 new ones
    code, out, err = run_cli("rejudge", str(run_dir), "--no-judge-cache")
    rejudged = read_json(out.strip())
    artifact.validate(rejudged)
    again = by_task(rejudged["judge_agreement"])
    assert again["steady"]["outputs"] == 1 and again["steady"]["judgements"] == 5
    assert again["steady"]["agreement"] == 1.0
    assert again["flaky"]["judgements"] == 5 and again["flaky"]["disagreeing_outputs"] == 1


def test_a_suite_without_model_graded_judges_has_no_section(tmp_path: Path) -> None:
    suite = write_suite(
        tmp_path / "s",
        [{"id": "t", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}}],
    )
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "-q",
    )
    assert "judge_agreement" not in read_json(out.strip())
