"""The executors of a run's --arm arms, built in the prepare step: one per executor, skill
mode (an arm's delivery: core.execution.delivery_mode) and model (an arm's `@MODEL`, None for
the executor's own), each from the plan's options for it (plan/executor_options.py), so an
executor that reads its mode from its config delivers as the arm says as surely as one that
reads it per request. A `none` arm runs on an instance its executor already has on its model
for an installing arm (the agent as that arm runs it, without the skill). What an executor
cannot deliver is refused here, in one line, before any call: an installed or nudged arm needs
`ExecutorBase.skills_dir`, a context arm `context_file`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..core.execution import delivery_mode
from ..core.model import Arm
from ..errors import UsageError
from ..executors.base import ExecutorBase

# (executor name, skill mode, model) -> executor
Build = Callable[[str, str | None, str | None], ExecutorBase]


def delivery_problem(executor: ExecutorBase, arm: Arm) -> str | None:
    """Why `executor` cannot deliver the skill as `arm` says; None when it can."""
    at = f"@{arm.model}" if arm.model else ""
    where = f"--arm {arm.name}={arm.executor}:{arm.delivery}{at}"
    if arm.delivery in ("installed", "nudged") and executor.skills_dir is None:
        return (
            f"{where}: the {arm.executor!r} executor cannot install a skill folder where its "
            "agent looks for skills; use delivery system, prepend, context or none with it"
        )
    if arm.delivery == "context" and executor.context_file is None:
        return (
            f"{where}: the {arm.executor!r} executor reads no always-on context file "
            "(CLAUDE.md, AGENTS.md) it could write the skill into"
        )
    return None


def build_arm_executors(arms: tuple[Arm, ...], build: Build) -> dict[str, ExecutorBase]:
    """Each arm's executor by arm name (see the module docstring); UsageError for an arm its
    executor cannot deliver."""
    built: dict[tuple[str, str | None, str | None], ExecutorBase] = {}
    out: dict[str, ExecutorBase] = {}
    for arm in arms:
        if arm.delivery is None or arm.executor is None or arm.delivery == "none":
            continue
        key = (arm.executor, delivery_mode(arm.delivery), arm.model)
        if key not in built:
            built[key] = build(*key)
        if (problem := delivery_problem(built[key], arm)) is not None:
            raise UsageError(problem)
        out[arm.name] = built[key]
    for arm in arms:
        if arm.name in out or arm.executor is None:
            continue
        mine = [
            (mode, e)
            for (name, mode, model), e in built.items()
            if name == arm.executor and model == arm.model
        ]
        found = next((e for mode, e in mine if mode == "installed"), None)
        if found is None:
            found = mine[0][1] if mine else build(arm.executor, None, arm.model)
            built.setdefault((arm.executor, None, arm.model), found)
        out[arm.name] = found
    return out


def distinct(executors: Mapping[str, ExecutorBase]) -> list[ExecutorBase]:
    """Each executor once, in arm order."""
    out: list[ExecutorBase] = []
    for executor in executors.values():
        if all(executor is not e for e in out):
            out.append(executor)
    return out


def describe_arms(
    arms: tuple[Arm, ...], executors: Mapping[str, ExecutorBase]
) -> dict[str, dict[str, Any]]:
    """Per arm: its delivery, its model when it names one, and its executor's describe() (the
    manifest, the fingerprint)."""
    described: dict[int, dict[str, Any]] = {}
    out = {}
    for arm in arms:
        executor = executors[arm.name]
        if id(executor) not in described:  # prices are cost, not results: not a run's identity
            described[id(executor)] = {
                k: v for k, v in executor.describe().items() if k != "prices"
            }
        out[arm.name] = {
            "delivery": arm.delivery,
            **({"model": arm.model} if arm.model else {}),
            "executor": described[id(executor)],
        }
    return out


__all__ = ["build_arm_executors", "delivery_problem", "describe_arms", "distinct"]
