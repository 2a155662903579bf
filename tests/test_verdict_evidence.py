"""Which failure it is: "not enough evidence" or "shown worse", in the policy's decision, the
artifact's evaluation (insufficient, detectable_margin, tasks_needed), the summary's words and
`skill-eval run`'s exit code (4 for lack of evidence; the verdict stays fail)."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from skill_eval.engine import artifact
from skill_eval.errors import ArtifactError
from skill_eval.report import render as report
from skill_eval.report.verdict_text import verdict_text
from skill_eval.stats.estimates import paired_comparison
from skill_eval.stats.evidence import assess, of_verdict
from skill_eval.stats.plan import PRIOR_SD
from skill_eval.stats.policy import decide_policy
from tests.helpers import contains_task, read_json, run_cli, write_outputs, write_skill, write_suite


def _arms(b: int, c: int, same: int = 0) -> tuple[dict[str, float], dict[str, float]]:
    cand = {f"up{i}": 1.0 for i in range(b)} | {f"down{i}": 0.0 for i in range(c)}
    base = {f"up{i}": 0.0 for i in range(b)} | {f"down{i}": 1.0 for i in range(c)}
    cand |= {f"same{i}": 1.0 for i in range(same)}
    base |= {f"same{i}": 1.0 for i in range(same)}
    return cand, base


@pytest.mark.parametrize(
    ("b", "c", "same", "outcome", "margin", "tasks", "samples"),
    [
        (6, 0, 0, "pass", 0.0, None, None),  # 6 of 6: passes the default policy
        (3, 0, 2, "pass", 9.6, None, None),  # the README demo: rules out 9.6 points, just
        (3, 0, 0, "insufficient", 31.6, 51, 52),  # a 3-of-3 sweep
        (4, 0, 0, "insufficient", 10.6, 64, 31),  # 4 of 4: p = 0.45^4 = 4.1% > 4%
        (0, 0, 20, "insufficient", 14.9, 186, 11),  # 20 tasks that agree
        (0, 10, 2, "worse", 97.3, None, None),  # a clear regression: 10 of 12 worse
    ],
)
def test_decisions_say_which_failure_it_is(b, c, same, outcome, margin, tasks, samples) -> None:
    comparison = paired_comparison(*_arms(b, c, same))
    decision = decide_policy("no-regression", comparison)
    evidence = assess(decision, comparison)
    assert decision.outcome == outcome and decision.passed is (outcome == "pass")
    assert evidence.insufficient is (outcome == "insufficient")
    assert evidence.detectable_margin == margin
    needed = evidence.tasks_needed
    if needed is None:
        assert tasks is None and samples is None
    else:
        assert (needed.tasks, needed.samples_for_these_tasks) == (tasks, samples)
    assert "may be" not in decision.reasoning
    if outcome == "insufficient":
        assert f"{b + c + same} tasks cannot rule out a 10-point regression" in decision.reasoning
    if outcome == "worse":
        assert "upper bound" in decision.reasoning and "more than 10 points worse" in (
            decision.reasoning
        )


def test_at_the_planned_tasks_runs_like_it_settle_about_four_times_in_five() -> None:
    """tasks_needed is a plan, not the size at which the observed result would just clear (a
    coin flip): of runs whose true delta is drawn from the plan's prior, reruns at the size
    each insufficient run names settle close to the stated 80% (scripts/plan_bench.py measures
    it per policy, samples and kind of result)."""
    rng = random.Random(7)

    def run(n: int, delta: float) -> tuple[str, Any]:
        p = [rng.uniform(0.2, 0.8) for _ in range(n)]
        cand = {f"t{i}": float(rng.random() < p[i] + delta) for i in range(n)}
        base = {f"t{i}": float(rng.random() < p[i]) for i in range(n)}
        comparison = paired_comparison(cand, base)
        decision = decide_policy("no-regression", comparison)
        return decision.outcome, assess(decision, comparison).tasks_needed

    settled = reruns = 0
    while reruns < 150:
        delta = rng.gauss(0.0, PRIOR_SD)
        outcome, needed = run(20, delta)
        if outcome != "insufficient":
            continue
        assert needed is not None and needed.probability == 0.8 and needed.tasks is not None
        if needed.tasks > 3000:  # a rerun too big for a test; the choice depends on this run
            continue
        settled += run(needed.tasks, delta)[0] != "insufficient"
        reruns += 1
    assert 0.7 <= settled / reruns <= 0.9


def test_a_delta_past_the_margin_plans_to_show_it_worse() -> None:
    cand = {f"t{i}": [0.0, 1 / 3, 2 / 3][i % 3] for i in range(9)}
    base = {f"t{i}": [1 / 3, 2 / 3, 2 / 3][i % 3] for i in range(9)}  # delta -2/9
    comparison = paired_comparison(cand, base, samples=3)
    decision = decide_policy("no-regression", comparison)
    needed = assess(decision, comparison).tasks_needed
    assert decision.outcome == "insufficient" and needed is not None
    assert needed.settles_as == "worse" and needed.tasks == 314 and needed.reason is None
    assert needed.effect is not None and -2 / 9 < needed.effect < -0.1  # shrunk toward zero


def test_an_even_result_on_the_threshold_plans_to_settle_either_way() -> None:
    """Under superior an even result is shrunk onto the threshold: a rerun of it settles,
    pass or worse, only as often as the true delta lies off it, so the plan is large and names
    no side."""
    comparison = paired_comparison(*_arms(1, 1, 3))
    decision = decide_policy("superior", comparison)
    needed = assess(decision, comparison).tasks_needed
    assert decision.outcome == "insufficient" and needed is not None
    assert needed.effect == 0.0 and needed.settles_as is None and needed.reason is None
    assert (needed.tasks, needed.samples_for_these_tasks) == (1734, 701)
    text = verdict_text({**decision_eval(decision), "tasks_needed": needed.to_dict()}, {})
    assert text.statement is not None
    assert "at about 1734 tasks at 1 sample" in text.statement
    assert text.statement.endswith(
        "an even result like this one settles 4 times in 5 on average over skills like it"
    )


def decision_eval(decision: Any) -> dict[str, Any]:
    return {
        "verdict": "fail",
        "reason": decision.reasoning,
        "policy": decision.to_dict(),
        "insufficient": True,
    }


def test_only_a_fail_the_policy_made_is_insufficient() -> None:
    comparison = paired_comparison(*_arms(3, 0))
    decision = decide_policy("no-regression", comparison)
    evidence = assess(decision, comparison)
    assert of_verdict("fail", decision.reasoning, decision, evidence).insufficient
    nothing = of_verdict("fail", "no task passed in either arm", decision, evidence)
    assert not nothing.insufficient and nothing.tasks_needed is None
    assert nothing.detectable_margin == evidence.detectable_margin
    assert not of_verdict("error", "too many errors", decision, evidence).insufficient


def test_other_policies_word_their_own_question() -> None:
    comparison = paired_comparison(*_arms(3, 0, 2))
    superior = decide_policy("superior", comparison)
    assert superior.outcome == "insufficient"
    assert "5 tasks cannot show an improvement" in superior.reasoning
    worse = paired_comparison(*_arms(0, 12))
    assert decide_policy("superior", worse).outcome == "worse"
    assert "the high end is below the margin" in decide_policy("non-inferior", worse).reasoning
    assert decide_policy("delta", worse).outcome == "worse"  # a point rule: never "insufficient"


# --- through the real CLI -------------------------------------------------------------------


def _run(tmp_path: Path, improved: int, regressed: int = 0, same: int = 0) -> tuple[int, Any, str]:
    """A standalone mock run: `improved` tasks pass only with the skill, `regressed` only
    without it, `same` in both arms."""
    ids = {"up": improved, "down": regressed, "same": same}
    tasks = [contains_task(f"{kind}{i}", "DONE") for kind, k in ids.items() for i in range(k)]
    cand = {t["id"]: ("nope" if t["id"].startswith("down") else "DONE") for t in tasks}
    base = {t["id"]: ("nope" if t["id"].startswith("up") else "DONE") for t in tasks}
    code, out, err = run_cli(
        "run",
        "--task-suite",
        str(write_suite(tmp_path / "suite", tasks)),
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--mock",
        "--mock-outputs",
        str(write_outputs(tmp_path / "out.yaml", {"candidate": cand, "baseline": base})),
        "--state-root",
        str(tmp_path / "state"),
    )
    assert out.strip(), err
    data = read_json(out.strip())
    artifact.validate(data)
    return code, data, err


def _verdict_line(err: str) -> str:
    """The summary's verdict line, without its label."""
    line = next(line for line in err.splitlines() if line.startswith("verdict"))
    return line.removeprefix("verdict").strip()


def test_a_three_task_sweep_is_not_enough_evidence(tmp_path: Path) -> None:
    code, data, err = _run(tmp_path, improved=3)
    ev = data["evaluation"]
    assert code == 4 and ev["verdict"] == "fail"  # pipelines still read fail
    assert ev["insufficient"] is True and ev["detectable_margin"] == 31.6
    assert ev["tasks_needed"] == {
        "tasks": 51,
        "samples": 1,
        "samples_for_these_tasks": 52,
        "these_tasks": 3,
        "probability": 0.8,
        "effect": 6.9,
        "settles_as": "pass",
        "reason": None,
    }
    assert _verdict_line(err) == (
        "FAIL (not enough evidence) [mock]: 3 tasks cannot rule out a 10-point "
        "regression (they rule out 31.6 points or more); at about 51 tasks at 1 sample, or "
        "these 3 at 52 samples, a result like this one (+6.9 points: the middle of its bounds, "
        "shrunk toward zero as most skills move a pass rate by little) settles 4 times in 5 on "
        "average over skills like it. 3 improved, none regressed"
    )
    assert "may be" not in err and "conclusion" not in err
    markdown = report.render_markdown(data)
    assert markdown.startswith("## skill-eval: FAIL (not enough evidence) [mock]\n")
    assert "3 tasks cannot rule out a 10-point regression" in markdown


def test_a_six_task_sweep_passes(tmp_path: Path) -> None:
    code, data, err = _run(tmp_path, improved=6)
    assert code == 0 and data["evaluation"]["verdict"] == "pass"
    assert data["evaluation"]["insufficient"] is False
    assert data["evaluation"]["tasks_needed"] is None
    assert _verdict_line(err).endswith(
        "PASS [mock]: the candidate is not 10 points worse than the baseline"
    )


def test_a_clear_regression_is_shown_worse(tmp_path: Path) -> None:
    code, data, err = _run(tmp_path, improved=0, regressed=10, same=2)
    ev = data["evaluation"]
    assert code == 1 and ev["verdict"] == "fail" and ev["insufficient"] is False
    assert re.match(
        r"FAIL \(shown worse\) \[mock\]: the candidate is more than 10 points worse than the "
        r"baseline \(0 improved, 10 regressed\)$",
        _verdict_line(err),
    )
    assert report.render_markdown(data).startswith("## skill-eval: FAIL (shown worse) [mock]\n")


def test_run_help_documents_the_exit_codes() -> None:
    code, out, _ = run_cli("run", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "4 fail, not enough evidence" in text and "1 fail: shown worse" in text
    assert "verdict is fail as well, with evaluation.insufficient true" in text


# --- the schema -----------------------------------------------------------------------------


def test_the_schema_checks_the_new_fields(tmp_path: Path) -> None:
    _code, data, _ = _run(tmp_path, improved=3)
    needed = data["evaluation"]["tasks_needed"]
    for bad in ({**needed, "tasks": 0}, {k: v for k, v in needed.items() if k != "samples"}):
        with pytest.raises(ArtifactError, match="tasks_needed"):
            artifact.validate({**data, "evaluation": {**data["evaluation"], "tasks_needed": bad}})
    with pytest.raises(ArtifactError, match="insufficient"):
        artifact.validate({**data, "evaluation": {**data["evaluation"], "insufficient": "yes"}})
    with pytest.raises(ArtifactError, match="detectable_margin"):
        artifact.validate({**data, "evaluation": {**data["evaluation"], "detectable_margin": -1}})
    older = {
        k: v
        for k, v in data["evaluation"].items()
        if k not in ("insufficient", "detectable_margin", "tasks_needed")
    }
    artifact.validate({**data, "evaluation": older})  # artifacts written before still read
    text = report.render_table({**data, "evaluation": older})
    assert "FAIL [mock]:" in text and "not enough evidence" not in text
