"""--early-stop: the group-sequential boundaries (pure), and runs through the real CLI with the
mock executor: a run that decides early skips the remaining rounds, records where it stopped,
and reaches the decision a fixed-sample run reaches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skill_eval.engine import artifact
from skill_eval.stats import sequential
from skill_eval.stats.estimates import paired_comparison
from tests.helpers import contains_task, read_json, run_cli, write_outputs, write_skill, write_suite

# Lan-DeMets O'Brien-Fleming-type boundaries, one-sided alpha 0.025, equally spaced looks
# (Jennison & Turnbull 2000, table 7.6; the usual published values).
PUBLISHED = {2: (2.963, 1.969), 3: (3.710, 2.511, 1.993), 5: (4.877, 3.357, 2.680, 2.290, 2.031)}


@pytest.mark.parametrize("looks", sorted(PUBLISHED))
def test_boundaries_match_published_values(looks: int) -> None:
    ours = sequential.boundaries(looks, 0.025)
    assert ours == pytest.approx(PUBLISHED[looks], abs=0.01)


def test_levels_spend_less_than_alpha_and_grow() -> None:
    levels = sequential.levels(3, 0.04)
    assert levels == sorted(levels)
    assert levels[-1] < 0.04 and sum(levels) > 0.04 * 0.9  # the last look keeps most of it
    assert sequential.levels(1, 0.04) == pytest.approx([0.04])


def test_looks_follow_rounds_of_pass_k() -> None:
    assert sequential.look_rounds(6, 2) == [2, 4, 6]
    assert sequential.look_rounds(5, 2) == [2, 5]
    assert sequential.look_of(6, 2, 4) == 2
    assert sequential.look_alpha("delta", 6, 2, 4) is None


def _comparison(diffs: list[float]) -> Any:
    return paired_comparison(
        {f"t{i}": max(d, 0.0) for i, d in enumerate(diffs)},
        {f"t{i}": max(-d, 0.0) for i, d in enumerate(diffs)},
    )


def test_call_passes_fails_or_samples_on() -> None:
    bad = _comparison([-1.0] * 30)
    assert (
        sequential.call(
            "no-regression", bad, False, alpha=0.01, per_task=1, margin=None, errors=False
        )
        == "fail"
    )  # clearly worse than the margin: futility
    mixed = _comparison([1.0, -1.0, 0.0, 0.0] * 3)
    assert (
        sequential.call(
            "no-regression", mixed, False, alpha=0.001, per_task=1, margin=None, errors=False
        )
        is None
    )
    good = _comparison([1.0] * 12)
    assert (
        sequential.call("superior", good, True, alpha=0.001, per_task=1, margin=None, errors=False)
        == "pass"
    )
    assert (
        sequential.call("superior", good, True, alpha=0.001, per_task=1, margin=None, errors=True)
        is None
    )  # an error: never stop early


def _run(tmp_path: Path, *extra: str, tasks: int = 12) -> dict[str, Any]:
    ids = [f"t{i:02d}" for i in range(tasks)]
    suite = write_suite(tmp_path / "suite", [contains_task(t, "DONE") for t in ids])
    outputs = write_outputs(
        tmp_path / "outputs.yaml",
        {"candidate": dict.fromkeys(ids, "DONE"), "baseline": dict.fromkeys(ids, "nope")},
    )
    skill = write_skill(tmp_path / "skill")
    state = tmp_path / f"state{len(list(tmp_path.glob('state*')))}"
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--state-root",
        str(state),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "-q",
        *extra,
    )
    assert out.strip(), err
    data = read_json(out.strip())
    artifact.validate(data)
    return data


def _attempts(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        a
        for key in ("candidate_results", "baseline_results")
        for r in data[key]
        for a in r["attempts"]
    ]


def test_clear_improvement_stops_at_the_first_look(tmp_path: Path) -> None:
    # The first look sees one pass/fail outcome per task and arm, so the exact test decides
    # it: 20 of 20 improved is below the first look's level (0.0004%: 0.5^20 = 0.0001%),
    # 12 of 12 is not (0.02%) and waits for the second look.
    data = _run(tmp_path, "--samples", "4", "--early-stop", "--policy", "superior", tasks=20)
    stop = data["early_stop"]
    assert stop["stopped_early"] and stop["stopped_at_look"] == 1
    assert stop["decision"] == "pass" and stop["looks"] == 4
    assert stop["planned_attempts"] == 20 * 2 * 4 and stop["skipped_attempts"] == 20 * 2 * 3
    assert data["evaluation"]["verdict"] == "pass"
    attempts = _attempts(data)  # only the first round ran; nothing skipped is an error
    assert len(attempts) == 40 and {a["index"] for a in attempts} == {0}
    assert {a["status"] for a in attempts} == {"passed", "failed"} and not data["errors"]
    fixed = _run(tmp_path, "--samples", "4", "--policy", "superior", tasks=20)
    assert fixed["evaluation"]["verdict"] == "pass" and "early_stop" not in fixed
    later = _run(tmp_path, "--samples", "4", "--early-stop", "--policy", "superior")
    assert later["early_stop"]["stopped_at_look"] == 2


def test_delta_is_final_after_pass_k(tmp_path: Path) -> None:
    data = _run(tmp_path, "--samples", "3", "--early-stop", "--policy", "delta", tasks=4)
    assert data["early_stop"]["stopped_at_look"] == 1
    assert data["early_stop"]["skipped_attempts"] == 4 * 2 * 2
    fixed = _run(tmp_path, "--samples", "3", "--policy", "delta", tasks=4)
    assert data["evaluation"]["verdict"] == fixed["evaluation"]["verdict"] == "pass"


def test_undecided_run_goes_to_the_last_look(tmp_path: Path) -> None:
    data = _run(tmp_path, "--samples", "2", "--early-stop", "--policy", "superior", tasks=2)
    stop = data["early_stop"]
    assert not stop["stopped_early"] and stop["stopped_at_look"] is None
    assert stop["skipped_attempts"] == 0 and stop["decision"] is None
