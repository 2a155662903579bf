"""The decision function: the issue's rules in the issue's order, table-driven."""

from __future__ import annotations

import pytest

from skill_eval.improve import DecisionInput, IterationSettings, decide

S = IterationSettings()  # iterate 3, quality 0.8, improvement 0.05, regression 0.10
CAPPED = IterationSettings(max_cost_usd=2.0)  # the command's --max-cost-usd 2


def state(
    iteration: int = 1,
    train: float = 0.5,
    previous: float | None = None,
    tokens: int = 0,
    cost: float = 0.0,
    elapsed: float = 0.0,
) -> DecisionInput:
    return DecisionInput(iteration, train, previous, tokens, cost, elapsed)


CASES = [
    # (name, state, settings, expected decision, words in the reason)
    ("first iteration below quality", state(), S, "Continue", "< quality"),
    ("token budget", state(tokens=600_001), S, "AbortBudget", "600001 > budget 600000"),
    ("token budget exactly spent is fine", state(tokens=600_000), S, "Continue", ""),
    ("usd budget", state(cost=2.01), CAPPED, "AbortBudget", "$2.01 > max $2.00"),
    ("no usd cap by default", state(cost=2.01), S, "Continue", "< quality"),
    ("budget beats timeout", state(cost=3.0, elapsed=9999), CAPPED, "AbortBudget", ""),
    ("timeout", state(elapsed=1800.5), S, "AbortTimeout", "> timeout 1800s"),
    ("timeout beats regression", state(2, 0.1, 0.9, elapsed=2000), S, "AbortTimeout", ""),
    ("regression", state(2, 0.3, 0.5), S, "AbortRegression", "keeping the previous"),
    ("regression beats quality", state(2, 0.85, 1.0), S, "AbortRegression", ""),
    (
        "drop within threshold is not a regression",
        state(2, 0.45, 0.5),
        S,
        "AcceptBest",
        "improvement -0.05",
    ),
    (
        "regression check off",
        state(2, 0.3, 0.5),
        IterationSettings(abort_on_regression=False),
        "AcceptBest",
        "improvement",
    ),
    ("quality met", state(1, 0.8), S, "Accept", "0.80 >= quality 0.80"),
    ("quality beats max iterations", state(3, 0.9, 0.5), S, "Accept", ""),
    ("max iterations", state(3, 0.6, 0.4), S, "AcceptBest", "reached 3 of 3"),
    (
        "max iterations beats diminishing returns",
        state(3, 0.5, 0.5),
        S,
        "AcceptBest",
        "reached 3 of 3",
    ),
    ("diminishing returns", state(2, 0.52, 0.5), S, "AcceptBest", "improvement +0.02 < "),
    ("enough improvement", state(2, 0.6, 0.5), S, "Continue", ""),
    ("custom quality", state(1, 0.85), IterationSettings(quality=0.9), "Continue", ""),
]


@pytest.mark.parametrize(
    ("name", "st", "settings", "expected", "words"), CASES, ids=[c[0] for c in CASES]
)
def test_decide(
    name: str, st: DecisionInput, settings: IterationSettings, expected: str, words: str
) -> None:
    got = decide(st, settings)
    assert got.decision == expected
    assert words in got.reason


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"iterate": 0}, "iterate"),
        ({"quality": 1.5}, "quality"),
        ({"holdout": 1.0}, "holdout"),
        ({"token_budget": 0}, "token_budget"),
        ({"timeout_seconds": 0}, "timeout_seconds"),
    ],
)
def test_bad_settings_are_named(kwargs: dict[str, float], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        IterationSettings(**kwargs)  # type: ignore[arg-type]


def test_recall_gets_a_tenth_of_an_iteration_budget() -> None:
    assert IterationSettings(token_budget=200_000).recall_token_budget == 20_000
