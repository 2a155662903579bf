"""`plan_from_flags`: a RunPlan from the flags of `skill-eval run`, by their Python names (the
long flag with `_` for `-`: `task_suite`, `pass_k`, `judge_model`; `input` for --input and
`progress` for the opposite of --quiet), every value and combination checked.

    RunPlan.from_flags(task_suite="suite.yaml", standalone=True, skill_path="my-skill",
                       mock=True, executor_options={"mock_rules": True})

A flag given as None takes its default. Unlike the `run` command, nothing is implied:
`standalone=True` is written out (as for scripts/evaluate.py). The shorthand flags of
executor options (`max_tokens`, `claude_bin`, ...) and `executor_options` go through
plan/executor_options.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from ..core.validation import did_you_mean
from ..executors.base import OFFLINE_EXECUTOR
from ..judges.llm import default_judge_model
from .arms import parse_arm, parse_arms, reference_of, stored_arms
from .checks import (
    check_arm_flags,
    check_budget,
    check_choices,
    check_counts,
    check_executors,
    check_inputs,
    check_offline_shorthands,
    check_scale,
    check_shorthand_values,
    executor_of_flags,
    judge_executor_name,
)
from .executor_options import (
    SHORTHAND_PARAMS,
    ExecutorTable,
    check_tables,
    resolve_options,
    table_options,
)
from .sections import (
    Decision,
    Execution,
    ExecutorChoice,
    Inputs,
    Judging,
    Records,
    frozen_mapping,
)

if TYPE_CHECKING:  # run_plan imports this module: RunPlan.from_flags passes its class in
    from .run_plan import RunPlan

SECTIONS: dict[str, type[Any]] = {
    "inputs": Inputs,
    "execution": Execution,
    "executor": ExecutorChoice,
    "judging": Judging,
    "decision": Decision,
    "records": Records,
}
# Flags whose Python name differs from their field: flag -> (section, field).
RENAMED = {
    "input": ("inputs", "ranking"),
    "arm": ("inputs", "arms"),
    "judge_executor": ("judging", "executor"),
    "judge_model": ("judging", "model"),
    "judge_cache_dir": ("judging", "cache_dir"),
    "jail": ("execution", "jail_provider"),
}
# Flags that are not one field: resolved by plan_from_flags itself.
RESOLVED = frozenset({"standalone", "mock", "executor", "no_judge_cache"})
# Fields that are not flags (derived from the flags above, or the executor's options).
NOT_FLAGS = frozenset(
    {
        *("mode", "name", "options", "cache", "grader_options", "arm_options"),
        *("family_size", "default_model"),
    }
)


def _places() -> dict[str, tuple[str, str]]:
    """Every plain flag -> (section, field)."""
    places = dict(RENAMED)
    renamed_fields = {place for place in RENAMED.values()}
    for section, cls in SECTIONS.items():
        for f in fields(cls):
            if f.name not in NOT_FLAGS and (section, f.name) not in renamed_fields:
                places.setdefault(f.name, (section, f.name))
    return places


PLACES = _places()
FLAGS = frozenset(PLACES) | RESOLVED | SHORTHAND_PARAMS


def plan_from_flags(
    plan_type: type[RunPlan],
    *,
    executor_options: Iterable[str] | Mapping[str, Any] = (),
    executor_tables: Sequence[ExecutorTable] = (),
    from_config: Iterable[str] = (),
    **flags: Any,
) -> RunPlan:
    """The checked plan of these flags, a `plan_type` (RunPlan: its `from_flags` calls this;
    see the module docstring). `executor_options` are
    `KEY=VALUE` strings (the command line) or a mapping; `executor_tables` and
    `from_config` (the flags whose values came from the config file's top level) are what
    the command line read from the project config file."""
    unknown = sorted(set(flags) - FLAGS)
    if unknown:
        raise TypeError(
            f"RunPlan.from_flags: unknown flag {unknown[0]!r}{did_you_mean(unknown[0], FLAGS)}"
        )
    if not flags.get("task_suite"):
        raise TypeError("RunPlan.from_flags: task_suite is required")
    shorthands = {k: flags.pop(k) for k in SHORTHAND_PARAMS if k in flags}
    mock = bool(flags.pop("mock", False))
    named = flags.pop("executor", None)
    name = executor_of_flags(mock, named)
    if flags.get("arm"):
        name, flags["arm"], flags["reference_arm"] = _arms(flags, name, named is None, mock)
    values: dict[str, dict[str, Any]] = {section: {} for section in SECTIONS}
    for flag, value in flags.items():
        if flag in PLACES and value is not None:  # None: the section's default
            section, field = PLACES[flag]
            values[section][field] = tuple(value) if isinstance(value, list) else value
    values["inputs"]["mode"] = "standalone" if flags.get("standalone") else "pipeline"
    values["judging"]["cache"] = not flags.get("no_judge_cache", False)
    values["executor"]["name"] = name
    sections = {section: SECTIONS[section](**vals) for section, vals in values.items()}
    _check(sections, mock, shorthands)
    judging: Judging = sections["judging"]
    if mock and judging.executor is None:
        judging = replace(judging, executor=OFFLINE_EXECUTOR)
    if judging.default_model is None:
        judging = replace(judging, default_model=default_judge_model())
    check_tables(executor_tables)
    tables = {t.name: t for t in executor_tables}
    arm_options = {
        arm.executor: table_options(arm.executor, tables.get(arm.executor))
        for arm in stored_arms(sections["inputs"].arms)
        if arm.executor != name
    }
    options, grader = resolve_options(
        name,
        judge=judge_executor_name(name, judging),
        shorthands=shorthands,
        from_config=from_config,
        config_file=flags.get("config_file"),
        cli_options=executor_options,
        table=tables.get(name),
    )
    return plan_type(
        inputs=sections["inputs"],
        execution=sections["execution"],
        executor=replace(
            sections["executor"],
            options=frozen_mapping(options),
            arm_options=frozen_mapping(arm_options),
        ),
        judging=replace(judging, grader_options=frozen_mapping(grader)),
        decision=sections["decision"],
        records=sections["records"],
    )


def _arms(
    flags: Mapping[str, Any], name: str, pick: bool, mock: bool
) -> tuple[str, list[str], str]:
    """(the run's executor, the arms as stored, the reference arm) of --arm: the executor is
    the first arm's when `pick` (no --executor or --mock) and every arm names its own; with
    --mock every arm runs on the mock executor."""
    texts = [str(t) for t in flags["arm"]]
    if pick and not mock and all(":" in text.partition("=")[2] for text in texts):
        name = parse_arm(texts[0], name).executor
    specs = parse_arms(texts, name, mock=mock)
    return name, [s.text for s in specs], reference_of(specs, flags.get("reference_arm"))


def _check(sections: Mapping[str, Any], mock: bool, shorthands: Mapping[str, Any]) -> None:
    inputs, execution, executor = sections["inputs"], sections["execution"], sections["executor"]
    judging, decision, records = sections["judging"], sections["decision"], sections["records"]
    check_inputs(inputs)
    check_counts(decision, execution, records)
    check_shorthand_values(shorthands)
    check_choices(execution, executor, decision, records)
    check_executors(executor, judging, mock)
    check_offline_shorthands(executor.name, shorthands)
    check_scale(execution, executor, decision, records, bool(shorthands.get("batch")))
    check_budget(decision, execution, inputs, records, bool(shorthands.get("batch")))
    check_arm_flags(inputs, decision, records, bool(shorthands.get("batch")))


__all__ = ["FLAGS", "PLACES", "plan_from_flags"]
