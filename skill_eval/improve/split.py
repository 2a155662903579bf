"""Split a suite's tasks into train and holdout, stratified by category, seeded.

Only train results reach the improver; holdout tasks decide which version is best, so an
improvement that only fits the tasks the improver saw is caught. The split is a pure function of
(task ids, categories, fraction, seed): the same inputs give the same split on every machine.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol


class TaskLike(Protocol):
    """What the split reads of a task (skill_eval.core.model.Task fits)."""

    @property
    def id(self) -> str: ...

    @property
    def category(self) -> str | None: ...


@dataclass(frozen=True)
class Split:
    """Train tasks feed the improver; holdout tasks pick the best version; confirm tasks
    (set apart from the holdout when the pick is confirmed: set_apart_to_confirm) are what the
    pick is confirmed on, seen by neither."""

    train: tuple[str, ...]
    holdout: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    confirm: tuple[str, ...] = ()


def _rng(seed: int, key: str) -> random.Random:
    # A per-category stream: adding a task to one category does not reshuffle the others.
    digest = hashlib.sha256(f"{seed}\0{key}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def split_tasks(tasks: Sequence[TaskLike], holdout: float = 0.4, seed: int = 0) -> Split:
    """Train and holdout task ids, each in suite order.

    Per category, round(n * holdout) tasks go to holdout, clamped so that a category with two or
    more tasks has at least one on each side. Tasks alone in their category (and tasks without
    one, grouped per task) are pooled and split by the same fraction. Train is never empty.
    """
    if not 0.0 <= holdout < 1.0:
        raise ValueError(f"holdout: must be in [0, 1), got {holdout}")
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError("tasks: ids must be unique")
    if not ids:
        raise ValueError("tasks: the suite has no tasks")
    warnings: list[str] = []
    if holdout == 0.0:
        warnings.append(
            "holdout is 0: no held-out check, an improvement may only fit the train tasks"
        )
        return Split(tuple(ids), (), tuple(warnings))

    groups: dict[str, list[str]] = {}
    for t in tasks:
        if t.category:
            groups.setdefault(t.category, []).append(t.id)
    loners = [t.id for t in tasks if not t.category or len(groups[t.category]) < 2]
    chosen: set[str] = set()
    for category in sorted(groups):
        members = groups[category]
        if len(members) < 2:
            continue
        order = sorted(members)
        _rng(seed, "category:" + category).shuffle(order)
        take = min(max(round(len(order) * holdout), 1), len(order) - 1)
        chosen.update(order[:take])
    if loners:
        order = sorted(loners)
        _rng(seed, "loners").shuffle(order)
        chosen.update(order[: round(len(order) * holdout)])
    if len(chosen) == len(ids):
        # Only possible with single-task categories and a large fraction: keep one to train on.
        chosen.discard(sorted(chosen)[0])
    if not chosen:
        warnings.append(
            f"holdout is empty ({len(ids)} task(s) at fraction {holdout}): no held-out check"
        )
    train = tuple(i for i in ids if i not in chosen)
    held = tuple(i for i in ids if i in chosen)
    return Split(train, held, tuple(warnings))


def set_apart_to_confirm(split: Split, seed: int = 0) -> Split:
    """`split` with half its holdout tasks (a seeded draw, at least one each side) set apart:
    the pick is confirmed on tasks that did not pick it. A holdout of one task cannot be cut:
    it picks and confirms, and a warning says so."""
    held = split.holdout
    if len(held) < 2:
        note = "one holdout task: the pick is confirmed on the task that picked it"
        warnings = (*split.warnings, note) if held else split.warnings
        return replace(split, confirm=held, warnings=warnings)
    order = sorted(held)
    _rng(seed, "confirm").shuffle(order)
    apart = set(order[: len(order) // 2])
    return replace(
        split,
        holdout=tuple(i for i in held if i not in apart),
        confirm=tuple(i for i in held if i in apart),
    )
