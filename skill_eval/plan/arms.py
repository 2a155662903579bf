"""The arms of a run that compares agents, deliveries and models: `--arm
NAME=EXECUTOR:DELIVERY[@MODEL]` (repeatable; `NAME=DELIVERY` runs on the run's --executor;
`@MODEL` runs the arm on that model, else the executor's), or the config file's
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
FORM = (
    "NAME=EXECUTOR:DELIVERY[@MODEL] or NAME=DELIVERY[@MODEL] (e.g. ctx=claude-cli:context, "
    "new=claude-cli:installed@claude-sonnet-5)"
)
# a model id as providers spell them (`claude-sonnet-4-5`, Bedrock's `...-v2:0`, Vertex's
# `...@20240620`): printable, no spaces, bounded
MODEL = re.compile(r"^[A-Za-z0-9][\x21-\x7e]{0,199}$")


@dataclass(frozen=True)
class ArmSpec:
    """One arm: its name, the registered executor that runs it, how the skill reaches it, and
    the model it runs on (None: the executor's own, as --model or its table sets it)."""

    name: str
    executor: str
    delivery: Delivery
    model: str | None = None

    @property
    def text(self) -> str:
        """The canonical `NAME=EXECUTOR:DELIVERY[@MODEL]` the plan stores."""
        at = f"@{self.model}" if self.model else ""
        return f"{self.name}={self.executor}:{self.delivery}{at}"


def parse_arm(text: str, executor: str) -> ArmSpec:
    """One `--arm` value; `executor` runs it when the value names none."""
    parsed = _parse(text, executor)
    if isinstance(parsed, str):
        raise UsageError(f"--arm {text!r}: {parsed}")
    return parsed


def _parse(text: str, executor: str) -> ArmSpec | str:
    """The arm `text` names, or why it names none (the caller says where the text came from)."""
    name, sep, rest = text.partition("=")
    rest, at, model = rest.partition("@")  # the first `@`: a Vertex model id has its own
    name, rest, model = name.strip(), rest.strip(), model.strip()
    if at and not MODEL.match(model):
        return (
            f"the model {model!r} must be a model id: 1-200 printable characters without "
            "spaces, starting with a letter or digit"
        )
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
    return ArmSpec(name, named, _delivery(delivery), model if at else None)


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
            if isinstance(arm, Mapping) and set(arm) <= {"executor", "delivery", "model"}:
                executor, delivery = arm.get("executor"), arm.get("delivery")
                model = arm.get("model")
                if isinstance(delivery, str) and all(
                    isinstance(x, str | None) for x in (executor, model)
                ):
                    at = f"@{model}" if model is not None else ""
                    where = f"{executor}:{delivery}" if executor else delivery
                    texts.append(f"{name}={where}{at}")
                    continue
            elif isinstance(arm, str):
                texts.append(f"{name}={arm}")
                continue
            return [], (
                f'arms.{name}: must be "EXECUTOR:DELIVERY[@MODEL]" or a table with '
                f"`delivery` (and `executor`, `model`), got {arm!r}"
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
    """Every `--arm`, checked together: two at least, names and (executor, delivery, model)
    each once. With `mock` every arm runs on the mock executor (a dry run of the same arms, on
    the same models as the mock records them)."""
    specs = [parse_arm(text, executor) for text in texts]
    if len(specs) < 2:
        raise UsageError(f"--arm: give two arms at least ({FORM}), got {len(specs)}")
    seen: dict[str, ArmSpec] = {}
    pairs: dict[tuple[str, str, str | None], ArmSpec] = {}
    for spec in specs:
        if spec.name in seen:
            raise UsageError(f"--arm: the name {spec.name!r} is given twice; arm names must differ")
        pair = (spec.executor, spec.delivery, spec.model)
        if pair in pairs:
            raise UsageError(
                f"--arm: arms {pairs[pair].name!r} and {spec.name!r} are the same "
                f"({spec.text.partition('=')[2]}); each arm must differ by executor, delivery "
                "or model"
            )
        seen[spec.name], pairs[pair] = spec, spec
    if mock:
        specs = [ArmSpec(s.name, OFFLINE_EXECUTOR, s.delivery, s.model) for s in specs]
    return tuple(specs)


def reference_of(specs: Sequence[ArmSpec], reference: str | None) -> str:
    """The arm the others are compared with: `--reference-arm`, else the `none` arm, else the
    first. `none` arms on several models need --reference-arm: which model the run decides on
    is the user's to say (the change between models is told towards its model)."""
    names = [s.name for s in specs]
    nones = [s for s in specs if s.delivery == "none"]
    if reference is None and len({s.model for s in nones}) > 1:
        raise UsageError(
            f"--arm: {', '.join(s.name for s in nones)} are none arms on several models; "
            "name the one the verdict compares with, --reference-arm NAME (the new model's, "
            "to gate on it)"
        )
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
        rest, at, model = rest.partition("@")
        executor, _, delivery = rest.rpartition(":")
        out.append(ArmSpec(name, executor, _delivery(delivery), model if at else None))
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
