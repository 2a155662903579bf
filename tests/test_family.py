"""Several candidates against one baseline: Holm over the candidates of one evaluation,
Bonferroni for the version improve picked, and the confirmation improve records."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval import Arm, Decision, Skill, evaluate, load_suite
from skill_eval.executors.base import create_executor
from skill_eval.improve.adapter import make_compare_fn
from skill_eval.stats.family import bonferroni, holm_adjusted, holm_levels
from tests.helpers import run_cli


@pytest.mark.parametrize(
    ("p", "adjusted"),
    [
        ([0.01, 0.04, 0.03], [0.03, 0.06, 0.06]),  # 3 * 0.01, then max(2 * 0.03, .), 0.04
        ([0.2, 0.001], [0.2, 0.002]),
        ([0.5, 0.6, 0.7], [1.0, 1.0, 1.0]),
        ([0.02], [0.02]),
    ],
)
def test_holm_adjusted_p_values(p: list[float], adjusted: list[float]) -> None:
    assert holm_adjusted(p) == pytest.approx(adjusted)


def test_holm_levels_reproduce_holm_decisions() -> None:
    for p in ([0.01, 0.04, 0.03], [0.011, 0.02, 0.019], [0.001, 0.5], [0.03, 0.035]):
        levels = holm_levels(p, 0.04)
        decisions = [x <= lvl for x, lvl in zip(p, levels, strict=True)]
        assert decisions == [a <= 0.04 for a in holm_adjusted(p)]
        assert all(lvl <= 0.04 for lvl in levels)
    assert bonferroni(0.04, 2) == 0.02
    with pytest.raises(ValueError):
        bonferroni(0.04, 0)


SUITE = 'skill_id: "notes"\nversion: "1.0"\ntasks:\n' + "".join(
    f'  - id: "t{i}"\n    prompt: "note {i}"\n'
    f'    judge: {{type: "contains", expected: ["ok{i}"]}}\n'
    for i in range(12)
)
GOOD = {f"t{i}": f"ok{i}" for i in range(12)}


@pytest.fixture
def suite(tmp_path: Path):
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    return load_suite(tmp_path / "suite.yaml")


def test_several_candidates_are_held_over_the_family(suite) -> None:
    executor = create_executor("mock", {"mock_outputs": {"v2": GOOD, "v3": GOOD}})
    arms = [Arm(n, Skill(n, f"# {n}"), n) for n in ("v1", "v2", "v3")]
    result = evaluate(suite, arms, executor)
    for name in ("v2", "v3"):
        policy = result.comparison(name).analysis.policy
        assert policy is not None and policy.passed  # 12 of 12: clears even Holm's levels
        assert "Holm over 2 candidates" in policy.reasoning
        assert policy.alpha is not None and policy.alpha <= 0.04
    alone = evaluate(suite, arms[:2], executor).comparison("v2").analysis.policy
    assert alone is not None and "Holm" not in alone.reasoning and alone.alpha == 0.04


def test_the_confirmation_is_held_to_its_share_of_the_family(suite) -> None:
    compare = make_compare_fn(suite, create_executor("mock", {"mock_outputs": {"best": GOOD}}))
    passed, reason = compare({"SKILL.md": "# new"}, {"SKILL.md": "# old"}, list(GOOD), 1)
    assert passed and "Bonferroni" not in reason
    passed, reason = compare({"SKILL.md": "# new"}, {"SKILL.md": "# old"}, list(GOOD), 3)
    assert passed and "98.67% (Bonferroni share: 3 candidates compared)" in reason
    # 5 of 5 improved rule out -10 points at 4% (0.45^5 = 1.8%), not at 4% / 3
    five = list(GOOD)[:5]
    assert compare({"SKILL.md": "# new"}, {"SKILL.md": "# old"}, five, 1)[0]
    assert not compare({"SKILL.md": "# new"}, {"SKILL.md": "# old"}, five, 3)[0]
    assert Decision(family_size=3).family_size == 3


def test_improve_help_names_the_confirmation_split() -> None:
    code, out, _ = run_cli("improve", "--help")
    text = " ".join(out.split())
    assert code == 0
    assert "confirm the other half, seen by neither: the pick against the original" in text
    assert "(default superior: shown better) at its level / K" in text
