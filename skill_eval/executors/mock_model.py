"""A test double, not a feature: a mock model whose answer depends on the skill's rules.

Paired with `MockImprover`, it lets the improve loop converge offline and deterministically: a
task is answered correctly exactly when the skill holds the rule for it, the marker
`[rule:<key>]` where the key is the task's id or its category. A rule keyed by category is how
an improvement learned on train tasks carries over to holdout tasks of the same category.
It lives beside the mock executor, whose `mock_rules` mode answers with it; the improver
(improve/improver.py) only writes the rules.
"""

from __future__ import annotations

from collections.abc import Sequence


def rule_marker(key: str) -> str:
    return f"[rule:{key}]"


def rule_line(key: str) -> str:
    """The line `MockImprover` appends to SKILL.md for one failing task."""
    return f"- {rule_marker(key)} For {key} tasks, state every term the task asks for."


def has_rule(skill_text: str, task_id: str, category: str | None = None) -> bool:
    keys = [task_id] + ([category] if category else [])
    return any(rule_marker(k) in skill_text for k in keys)


def rule_following_output(
    skill_text: str, task_id: str, category: str | None = None, expected: Sequence[str] = ()
) -> str:
    """The mock model's answer to task `task_id` under `skill_text`.

    With the rule (by id or category) the answer names every `expected` term; without it the
    answer is a generic sentence that names none of them, so a contains check fails.
    """
    if has_rule(skill_text, task_id, category):
        return f"Answer to {task_id}: " + ", ".join(expected) + "."
    return f"Answer to {task_id}: I am not sure what is wanted here."
