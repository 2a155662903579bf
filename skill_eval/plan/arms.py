"""The arms of a run that compares agents and deliveries: `--arm NAME=EXECUTOR:DELIVERY`
(repeatable; `NAME=DELIVERY` runs on the run's --executor), or the config file's
`[tool.skill-eval.arms]` table, and `--reference-arm NAME`. Every arm runs the candidate skill
(--skill-path) the same way but for where it runs and how the skill reaches it
(core.execution.DELIVERIES). Each spec is checked here in one line naming the flag; what
needs the executors themselves (can this one install, which context file does it read) is
checked once they are built (engine/arm_executors.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from ..core.execution import DELIVERIES, Delivery
from ..core.validation import did_you_mean
from ..errors import ExecutorError, UsageError
from ..executors.base import OFFLINE_EXECUTOR, executor_names, get_executor_spec

ARM_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")
FORM = "NAME=EXECUTOR:DELIVERY or NAME=DELIVERY (e.g. ctx=claude-cli:context)"


@dataclass(frozen=True)
class ArmSpec:
    """One arm: its name, the registered executor that runs it, how the skill reaches it."""

    name: str
    executor: str
    delivery: Delivery

    @property
    def text(self) -> str:
        """The canonical `NAME=EXECUTOR:DELIVERY` the plan stores."""
        return f"{self.name}={self.executor}:{self.delivery}"


def parse_arm(text: str, executor: str) -> ArmSpec:
    """One `--arm` value; `executor` runs it when the value names none."""
    parsed = _parse(text, executor)
    if isinstance(parsed, str):
        raise UsageError(f"--arm {text!r}: {parsed}")
    return parsed


def _parse(text: str, executor: str) -> ArmSpec | str:
    """The arm `text` names, or why it names none (the caller says where the text came from)."""
    name, sep, rest = text.partition("=")
    name, rest = name.strip(), rest.strip()
    named, colon, delivery = rest.rpartition(":")
    if not sep or not name or not rest or (colon and not named.strip()) or ":" in named:
        return f"must be {FORM}"
    if not ARM_NAME.match(name):
        return (
            f"the name {name!r} must be 1-40 letters, digits, '.', '_' or '-', starting with "
            "a letter or digit"
        )
    named = named.strip() if colon else executor
    delivery = delivery.strip()
    if delivery not in DELIVERIES:
        return (
            f"unknown delivery {delivery!r}{did_you_mean(delivery, DELIVERIES)}; "
            f"deliveries: {', '.join(DELIVERIES)}"
        )
    try:
        get_executor_spec(named)
    except ExecutorError:
        names = executor_names()
        return (
            f"unknown executor {named!r}{did_you_mean(named, names)}; executors: {', '.join(names)}"
        )
    return ArmSpec(name, named, _delivery(delivery))


def config_arms(value: Any, key: str) -> tuple[list[str], str | None]:
    """The `--arm` values of a config file's `arm` list or `arms` table (`key`), each checked
    as --arm checks it (an arm that names no executor runs on the run's, checked later), or
    why they are not arms, in words that name the key."""
    if key == "arm":
        texts = list(value)
    elif not isinstance(value, Mapping):
        return [], f'arms: must be a table of NAME = "EXECUTOR:DELIVERY", got {value!r}'
    else:
        texts = []
        for name, arm in value.items():
            if isinstance(arm, Mapping) and set(arm) <= {"executor", "delivery"}:
                executor, delivery = arm.get("executor"), arm.get("delivery")
                if isinstance(delivery, str) and isinstance(executor, str | None):
                    texts.append(
                        f"{name}={executor}:{delivery}" if executor else f"{name}={delivery}"
                    )
                    continue
            elif isinstance(arm, str):
                texts.append(f"{name}={arm}")
                continue
            return [], (
                f'arms.{name}: must be "EXECUTOR:DELIVERY" or a table with `delivery` (and '
                f"`executor`), got {arm!r}"
            )
    for text in texts:
        # any registered name stands for the run's executor, not known yet
        if isinstance(bad := _parse(text, OFFLINE_EXECUTOR), str):
            where = f"arms.{text.partition('=')[0]}" if key == "arms" else f"arm {text!r}"
            return [], f"{where}: {bad}"
    if len(texts) < 2:
        return [], f"{key}: give two arms at least ({FORM}), got {len(texts)}"
    return texts, None


def _delivery(text: str) -> Delivery:
    for delivery in get_args(Delivery):
        if delivery == text:
            return delivery  # type: ignore[no-any-return]
    raise ValueError(text)


def parse_arms(texts: Iterable[str], executor: str, mock: bool = False) -> tuple[ArmSpec, ...]:
    """Every `--arm`, checked together: two at least, names and (executor, delivery) pairs
    each once. With `mock` every arm runs on the mock executor (a dry run of the same arms)."""
    specs = [parse_arm(text, executor) for text in texts]
    if len(specs) < 2:
        raise UsageError(f"--arm: give two arms at least ({FORM}), got {len(specs)}")
    seen: dict[str, ArmSpec] = {}
    pairs: dict[tuple[str, str], ArmSpec] = {}
    for spec in specs:
        if spec.name in seen:
            raise UsageError(f"--arm: the name {spec.name!r} is given twice; arm names must differ")
        pair = (spec.executor, spec.delivery)
        if pair in pairs:
            raise UsageError(
                f"--arm: arms {pairs[pair].name!r} and {spec.name!r} are the same "
                f"({spec.executor}:{spec.delivery}); each arm must differ by executor or delivery"
            )
        seen[spec.name], pairs[pair] = spec, spec
    if mock:
        specs = [ArmSpec(s.name, OFFLINE_EXECUTOR, s.delivery) for s in specs]
    return tuple(specs)


def reference_of(specs: Sequence[ArmSpec], reference: str | None) -> str:
    """The arm the others are compared with: `--reference-arm`, else the `none` arm, else the
    first."""
    names = [s.name for s in specs]
    if reference is not None:
        if reference not in names:
            raise UsageError(
                f"--reference-arm {reference!r}: no such arm{did_you_mean(reference, names)}; "
                f"arms: {', '.join(names)}"
            )
        return reference
    return next((s.name for s in specs if s.delivery == "none"), names[0])


def stored_arms(texts: Iterable[str]) -> tuple[ArmSpec, ...]:
    """The arms a stored plan holds (canonical, checked when the plan was made)."""
    out = []
    for text in texts:
        name, _, rest = text.partition("=")
        executor, _, delivery = rest.rpartition(":")
        out.append(ArmSpec(name, executor, _delivery(delivery)))
    return tuple(out)


__all__ = [
    "ARM_NAME",
    "ArmSpec",
    "config_arms",
    "parse_arm",
    "parse_arms",
    "reference_of",
    "stored_arms",
]
