"""The verdict in plain words, one wording for every report (terminal, markdown, HTML): a pass
says what was shown; a fail says which failure it is, "not enough evidence" (with the tasks or
samples at which a result like it settles 4 times in 5) or "shown worse", and never that a
candidate which regressed nowhere "may be worse". Read from the artifact alone, older ones
included."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..stats.policy import DEFAULT_MARGIN

# Beside a verdict the mock executor made (evaluation.mocked): no model answered.
MOCK_MARK = "[mock]"

NOT_ENOUGH = "not enough evidence"
SHOWN_WORSE = "shown worse"
# The paired comparison's two-sided interval and McNemar p are shown beside the policy's own
# test (a one-sided 96% bound for no-regression), at another level: reports label which decides.
REFERENCE_LABEL = "for reference"
DECIDED_LABEL = "decided by"


@dataclass(frozen=True)
class VerdictText:
    """`kind`: NOT_ENOUGH or SHOWN_WORSE for a fail the policy made, else None; `statement`:
    the plain sentence (the verdict's reason when there is no policy to read)."""

    kind: str | None
    statement: str | None


def _points(x: float) -> str:
    text = f"{x:.1f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _moves(comparison: Mapping[str, Any]) -> str:
    improved = len(comparison.get("improved") or ())
    regressed = len(comparison.get("regressed") or ())
    return f"{improved} improved, {regressed or 'none'} regressed"


def _question(policy: Mapping[str, Any]) -> tuple[str, str, str]:
    """(what it cannot rule out, what a pass shows, what shown worse means) for a policy."""
    name = policy.get("name")
    margin = policy.get("margin", DEFAULT_MARGIN.get(str(name)))
    if name == "superior":
        return (
            "show an improvement",
            "the candidate is better than the baseline",
            "the candidate is worse than the baseline",
        )
    size = _points(float(margin) * 100) if isinstance(margin, int | float) else "?"
    if name == "non-inferior":
        return (
            f"rule out a regression of more than {size} points",
            f"the candidate is not worse than the baseline by more than {size} points",
            f"the candidate is worse than the baseline by more than {size} points",
        )
    return (
        f"rule out a {size}-point regression",
        f"the candidate is not {size} points worse than the baseline",
        f"the candidate is more than {size} points worse than the baseline",
    )


def _could(needed: Mapping[str, Any], these: int) -> str:
    """ "at about 40 tasks at 1 sample, or these 5 at 6 samples, an even result like this one
    settles 4 times in 5 on average over skills like it" (the plan's probability averages over
    the true deltas a result like this one may come from: stats/plan.py; artifacts before the
    plan: "... could")."""
    options = []
    tasks, samples = needed.get("tasks"), needed.get("samples")
    if isinstance(tasks, int) and isinstance(samples, int):
        options.append(f"about {tasks} tasks at {_count(samples, 'sample')}")
    more = needed.get("samples_for_these_tasks")
    if isinstance(more, int):
        options.append(f"these {these} at {_count(more, 'sample')}")
    probability = needed.get("probability")
    if not isinstance(probability, int | float):  # an artifact written before the plan
        if not options:
            return "more of the same would not: the observed delta does not clear the threshold"
        return ", or ".join(options) + (", could" if len(options) > 1 else " could")
    if not options:
        return f"no plan: {needed.get('reason') or 'no size would settle it'}"
    effect = needed.get("effect")
    like = (
        "an even result like this one"
        if not effect
        else f"a result like this one ({float(effect):+.1f} points: the middle of its bounds, "
        "shrunk toward zero as most skills move a pass rate by little)"
    )
    odds = _odds(float(probability))
    return f"at {', or '.join(options)}, {like} settles {odds} on average over skills like it"


def _odds(probability: float) -> str:
    """0.8 -> "4 times in 5"."""
    for total in (2, 3, 4, 5, 10, 20, 100):
        hits = probability * total
        if abs(hits - round(hits)) < 1e-9:
            return f"{round(hits)} times in {total}"
    return f"{probability:.0%} of the time"


def verdict_text(evaluation: Mapping[str, Any], comparison: Any) -> VerdictText:
    """The plain words for an artifact's `evaluation` (and its top-level `comparison`)."""
    reason = evaluation.get("reason")
    policy = evaluation.get("policy")
    verdict = evaluation.get("verdict")
    if not isinstance(policy, Mapping) or policy.get("name") == "delta":
        return VerdictText(None, str(reason) if reason else None)
    if verdict == "pass" and policy.get("passed"):
        return VerdictText(None, _question(policy)[1])
    if verdict != "fail" or reason != policy.get("reasoning") or "insufficient" not in evaluation:
        return VerdictText(None, str(reason) if reason else None)
    cannot, _shown, worse = _question(policy)
    cmp = comparison if isinstance(comparison, Mapping) else {}
    if not evaluation.get("insufficient"):
        moves = f" ({_moves(cmp)})" if cmp else ""
        return VerdictText(SHOWN_WORSE, f"{worse}{moves}")
    n = cmp.get("n_tasks")
    tasks = _count(n, "task") if isinstance(n, int) else "these tasks"
    text = f"{tasks} cannot {cannot}"
    ruled = evaluation.get("detectable_margin")
    if isinstance(ruled, int | float) and policy.get("name") != "superior":
        they = "they rule" if n != 1 else "it rules"
        text += f" ({they} out {_points(float(ruled))} points or more)"
    needed = evaluation.get("tasks_needed")
    if isinstance(needed, Mapping):
        text += "; " + _could(needed, n if isinstance(n, int) else 0)
    if cmp:
        text += f". {_moves(cmp).capitalize()}"
    return VerdictText(NOT_ENOUGH, text)


def _model(arm: Mapping[str, Any]) -> str | None:
    runs_on = arm.get("runs_on")
    named = arm.get("model") or (runs_on.get("model") if isinstance(runs_on, Mapping) else None)
    return str(named) if named else None


def models_combined(artifact: Mapping[str, Any]) -> str | None:
    """With --arm, when the verdict's arms (the first arm against the reference) run different
    models: that its difference combines the skill's effect and the model's, and where the
    per-model figures are. None otherwise."""
    section = artifact.get("arms")
    listed = section.get("arms") if isinstance(section, Mapping) else None
    arms = [a for a in listed or () if isinstance(a, Mapping)]
    reference = next((a for a in arms if a.get("reference")), None)
    candidate = next((a for a in arms if not a.get("reference")), None)
    if reference is None or candidate is None:
        return None
    mine, theirs = _model(candidate), _model(reference)
    if mine is None or theirs is None or mine == theirs:
        return None
    models = section.get("models") if isinstance(section, Mapping) else None
    per_model = isinstance(models, Mapping) and bool(models.get("lift"))
    where = "the skill's lift per model" if per_model else "each arm's figures side by side"
    return (
        f"{candidate.get('name')} runs on {mine} and {reference.get('name')} on {theirs}: "
        f"the difference combines the skill's effect with the model's (see {where})"
    )


def _level(value: float) -> str:
    return f"{value * 100:.2f}".rstrip("0").rstrip(".") + "%"


def decided_line(evaluation: Mapping[str, Any]) -> str | None:
    """The bound that decided against its threshold, first: "one-sided 96% lower bound -9.6
    points, above the margin -10 points (policy no-regression)"; None for artifacts without
    `policy.decided_by` (the delta policy, older artifacts)."""
    policy = evaluation.get("policy")
    decided = policy.get("decided_by") if isinstance(policy, Mapping) else None
    if not isinstance(policy, Mapping) or not isinstance(decided, Mapping):
        return None
    figures = [decided.get(key) for key in ("value", "threshold", "one_sided_level")]
    numbers = [float(x) for x in figures if isinstance(x, int | float)]
    if len(numbers) != 3:
        return None
    value, threshold, level = numbers
    side = "upper" if decided.get("bound") == "upper" else "lower"
    relation = "below" if side == "upper" else ("above" if value > threshold else "not above")
    target = "0" if not threshold else f"the margin {_points(threshold * 100)} points"
    return (
        f"one-sided {_level(level)} {side} bound {value * 100:+.1f} points, {relation} "
        f"{target} (policy {policy.get('name')})"
    )
