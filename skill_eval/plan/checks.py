"""The checks on a run plan's values and their combinations that need nothing but the values:
each a UsageError naming the flag, raised before anything runs. (What needs the disk or the
engine, such as the state root, the shard's form or the cache's time to live, is checked by
the prepare step, engine/prepare.py.)"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ExecutorError, UsageError
from ..executors.base import (
    DEFAULT_EXECUTOR,
    OFFLINE_EXECUTOR,
    SKILL_MODES,
    get_executor_spec,
    grader_names,
)
from ..executors.catalog import executors_with_option, has_option
from ..stats.policy import POLICIES
from .executor_options import SHORTHANDS, given
from .kinds import KEEP_POLICIES, RUNNERS
from .sections import Decision, Execution, ExecutorChoice, Inputs, Judging, Records

# Attempts per task and arm, at most: jobs are planned up front, so --samples 100000000 would
# end in MemoryError; a thousand attempts per task and arm is beyond any real budget.
MAX_SAMPLES = 1000


def check_inputs(inputs: Inputs) -> None:
    """Standalone needs a skill; pipeline needs a ranking and a candidate, and no skills."""
    if inputs.standalone:
        if inputs.ranking or inputs.candidate_id:
            raise UsageError("--standalone cannot be combined with --input/--candidate-id")
        if not inputs.skill_path:
            raise UsageError("--standalone needs --skill-path (a SKILL.md or its directory)")
        if inputs.baseline_skill and inputs.no_baseline:
            raise UsageError("--baseline-skill and --no-baseline exclude each other")
        return
    if not inputs.ranking or not inputs.candidate_id:
        raise UsageError(
            "pipeline mode needs --input RANKING and --candidate-id ID "
            "(or use --standalone --skill-path PATH)"
        )
    if inputs.skill_path or inputs.baseline_skill or inputs.no_baseline:
        raise UsageError(
            "--skill-path, --baseline-skill and --no-baseline are for --standalone mode"
        )


def check_counts(decision: Decision, execution: Execution, records: Records) -> None:
    """Counts and rates inside their ranges."""
    if decision.pass_k < 1:
        raise UsageError(f"--pass-k must be at least 1, got {decision.pass_k}")
    for flag, count in (("--pass-k", decision.pass_k), ("--samples", decision.samples)):
        if count is not None and count > MAX_SAMPLES:  # every attempt is planned up front
            raise UsageError(f"{flag} must be at most {MAX_SAMPLES}, got {count}")
    if decision.samples is not None and decision.samples < 1:
        raise UsageError(f"--samples must be at least 1, got {decision.samples}")
    if decision.samples is not None and decision.samples < decision.pass_k:
        raise UsageError(
            f"--samples ({decision.samples}) must be at least --pass-k ({decision.pass_k})"
        )
    if execution.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {execution.concurrency}")
    if execution.max_retries < 0:
        raise UsageError(f"--max-retries must be 0 or more, got {execution.max_retries}")
    # NaN fails every comparison, so each range is written as "not inside", which NaN is.
    for name, value, low, high in (
        ("--max-error-rate", decision.max_error_rate, 0.0, 1.0),
        ("--min-pass-rate", decision.min_pass_rate, 0.0, 1.0),
        ("--min-delta", decision.min_delta, -1.0, 1.0),
        ("--margin", 0.0 if decision.margin is None else decision.margin, 0.0, 1.0),
        ("--eval-threshold", decision.eval_threshold, -1e9, 1e9),
    ):
        if not low <= value <= high:
            raise UsageError(
                f"{name} must be between {low:g} and {high:g}, got {value:g}"
                f"{_as_fraction(name, value, low)}"
            )
    if records.max_preview_chars < 100:  # a preview must show something of both ends
        raise UsageError(
            f"--max-preview-chars must be at least 100, got {records.max_preview_chars}"
        )
    if execution.max_output_bytes < 1:
        cut = execution.max_output_bytes
        raise UsageError(f"--max-output-bytes must be at least 1, got {cut}")
    cost, tokens = records.max_cost_usd, records.max_tokens_total
    if cost is not None and not 0 < cost < 1e9:  # NaN and inf fail too
        raise UsageError(f"--max-cost-usd must be a number of dollars above 0, got {cost}")
    if tokens is not None and tokens < 1:
        raise UsageError(f"--max-tokens-total must be at least 1, got {tokens}")


def check_shorthand_values(values: Mapping[str, Any]) -> None:
    """The built-in executors' shorthand flags, in the words of the flag (the executor's
    schema checks them again, for --executor-option and plugins)."""
    temperature, max_tokens = values.get("temperature"), values.get("max_tokens")
    max_turns = values.get("max_turns")
    if temperature is not None and not 0.0 <= temperature <= 1.0:
        raise UsageError(f"--temperature must be between 0 and 1, got {temperature}")
    if max_tokens is not None and max_tokens < 1:
        raise UsageError(f"--max-tokens must be at least 1, got {max_tokens}")
    if max_turns is not None and max_turns < 1:
        raise UsageError(f"--max-turns must be at least 1, got {max_turns}")


def _as_fraction(flag: str, value: float, low: float) -> str:
    """The fraction a rate given in points meant (`--margin 10` or `-10`, as the summary
    speaks of points: 0.10), or a margin given with a sign; nothing for another value."""
    if low == -1e9 or not -100 <= value <= 100:
        return ""
    if abs(value) > 1:
        meant, slip = value / 100, "a fraction, not points"
    elif low == 0 and value < 0:
        meant, slip = value, "a size, without a sign"
    else:
        return ""
    meant = abs(meant) if low == 0 else meant  # --margin 10 points below: 0.10
    return f" ({slip}: did you mean {flag} {meant:.2f}?)"


def check_offline_shorthands(executor: str, values: Mapping[str, Any]) -> None:
    """A shorthand flag only the offline executor takes (--mock-outputs, --mock-rules) on
    another executor: the fix is --mock, which the option check's list would not say."""
    for short in SHORTHANDS:
        if not given(values.get(short.param)) or has_option(executor, short.option):
            continue
        if executors_with_option(short.option) == [OFFLINE_EXECUTOR]:
            raise UsageError(
                f"{short.flag}: the {executor!r} executor this run uses has no option "
                f"{short.option!r}; only the {OFFLINE_EXECUTOR!r} executor takes it (no model "
                "is called): add --mock"
            )


def check_choices(
    execution: Execution, executor: ExecutorChoice, decision: Decision, records: Records
) -> None:
    """Values of the closed sets (the command line's Choice types check them; Python
    callers of RunPlan.from_flags get the same words)."""
    for flag, value, valid in (
        ("--keep-workspaces", records.keep_workspaces, KEEP_POLICIES),
        ("--policy", decision.policy, POLICIES),
        ("--skill-mode", executor.skill_mode, SKILL_MODES),
        ("--runner", execution.runner, RUNNERS),
    ):
        if value not in valid:
            raise UsageError(f"{flag} must be one of {', '.join(valid)}, got {value!r}")


def check_executors(executor: ExecutorChoice, judging: Judging, mock: bool) -> None:
    """The executor and the judge executor exist; --mock agrees with both."""
    # One executor looked up by name imports that one only; listing every name would import
    # them all and scan the plugins' entry points (~100 ms before the first attempt).
    try:
        get_executor_spec(executor.name)
    except ExecutorError as exc:
        raise UsageError(f"--executor: {exc}") from None
    if judging.executor and not can_grade(judging.executor):
        raise UsageError(f"--judge-executor must be one of {', '.join(grader_names())}")
    executor_of_flags(mock, executor.name)  # --mock with another executor is refused there
    if mock and judging.executor not in (None, OFFLINE_EXECUTOR):
        raise UsageError(
            "--mock mocks the judges too; to judge scripted outputs with a real "
            f"model use --executor {OFFLINE_EXECUTOR} --judge-executor {judging.executor}"
        )


def check_scale(
    execution: Execution,
    executor: ExecutorChoice,
    decision: Decision,
    records: Records,
    batch: bool,
) -> None:
    """--runner, --ray-address, --shard, --early-stop, --batch and the baseline cache."""
    if batch and not has_option(executor.name, "batch"):  # a batch API, declared as an option
        raise UsageError(
            "--batch sends every attempt at once through a batch API: it needs --executor "
            f"{' or '.join(executors_with_option('batch'))} (got {executor.name})"
        )
    if execution.ray_address and execution.runner != "ray":
        raise UsageError("--ray-address is for --runner ray")
    if decision.early_stop and execution.shard is not None:
        raise UsageError(
            "--early-stop decides from every task's attempts; a shard sees only "
            "its slice: drop one of --early-stop and --shard"
        )
    if decision.early_stop and batch:
        raise UsageError(
            "--early-stop runs the samples in rounds and --batch sends every "
            "attempt at once: drop one of them"
        )
    if batch and execution.runner == "ray":
        raise UsageError(
            "--batch and --runner ray do not mix: the batch is sent from this "
            "machine and its results would not reach the Ray workers"
        )
    if execution.shard is not None and records.baseline_cache_dir:
        raise UsageError(
            "--shard cannot use --baseline-cache-dir: a shard runs part of the "
            "baseline, and the cache holds whole baselines"
        )


def check_budget(
    decision: Decision, execution: Execution, inputs: Inputs, records: Records, batch: bool
) -> None:
    """--budget places every attempt itself (a first round, then the rest by what it showed:
    stats/adaptive.py), so a flag that fixes, splits or stops the attempts otherwise is
    refused, each in one line. How many tasks it covers is checked once the suite is read."""
    budget = decision.budget
    if budget is None:
        return
    if budget < 2:
        raise UsageError(f"--budget must be at least 2 (an attempt per arm), got {budget}")
    refused = (
        (
            decision.samples is not None,
            "--samples fixes the attempts per task and arm and --budget places them: "
            "drop one of them",
        ),
        (
            decision.early_stop,
            "--early-stop and --budget both decide how many attempts run: drop one of them",
        ),
        (
            execution.shard is not None,
            "--budget places attempts by a first round over every task and a shard sees only "
            "its slice: drop one of --budget and --shard",
        ),
        (
            batch,
            "--budget runs in two rounds and --batch sends every attempt at once: drop one of them",
        ),
        (
            decision.pass_k > 1,
            "--budget places attempts for pass@1 estimates: drop --pass-k or --budget",
        ),
        (
            inputs.no_baseline,
            "--budget places attempts between the candidate and its baseline, and "
            "--no-baseline has none: drop one of them",
        ),
        (
            bool(records.baseline_cache_dir),
            "--budget places the baseline's attempts by the candidate's first round and the "
            "baseline cache holds fixed-sample baselines: drop --budget or --baseline-cache-dir "
            "(or SKILL_EVAL_BASELINE_CACHE_DIR)",
        ),
    )
    for clash, message in refused:
        if clash:
            raise UsageError(message)


def check_arm_flags(inputs: Inputs, decision: Decision, records: Records, batch: bool) -> None:
    """--arm (plan/arms.py) with what it cannot go with, each in one line: the arms replace
    the candidate/baseline pair of standalone mode, and the flags that place, pool or batch
    a candidate's and a baseline's attempts need that pair."""
    if inputs.reference_arm is not None and not inputs.arms:
        raise UsageError("--reference-arm names one of the --arm arms; give --arm too")
    if not inputs.arms:
        return
    refused = (
        (not inputs.standalone, "--arm runs the candidate skill of --skill-path: standalone mode"),
        (
            bool(inputs.baseline_skill) or inputs.no_baseline,
            "--arm sets every arm, the reference too (a `none` arm runs without the skill): "
            "drop --baseline-skill/--no-baseline",
        ),
        (decision.budget is not None, "--budget places attempts between two arms: drop --arm"),
        (
            decision.early_stop,
            "--early-stop looks at one comparison and --arm makes several: drop one of them",
        ),
        (
            bool(records.baseline_cache_dir),
            "--baseline-cache-dir holds baselines of two-arm runs: drop it with --arm (or "
            "unset SKILL_EVAL_BASELINE_CACHE_DIR)",
        ),
        (batch, "--batch sends one executor's attempts at once: drop it with --arm"),
    )
    for clash, message in refused:
        if clash:
            raise UsageError(message)


def can_grade(name: str) -> bool:
    """Whether executor `name` exists and has a grader for model-graded judges."""
    try:
        return get_executor_spec(name).grader is not None
    except ExecutorError:
        return False


MOCK_FLAG = "mock"  # --mock by its Python name (the offline executor's name too)


def executor_named(flags: Mapping[str, Any]) -> str:
    """`executor_of_flags` of a command's flags by their Python names (`mock`, `executor`)."""
    return executor_of_flags(bool(flags.get(MOCK_FLAG)), flags.get("executor"))


def executor_of_flags(mock: bool, executor: str | None) -> str:
    """The executor a command's flags name: the offline one with --mock, else --executor,
    else the default; --mock with another executor is an error. Every command asks this."""
    if mock and executor not in (None, OFFLINE_EXECUTOR):
        raise UsageError(f"--mock means --executor {OFFLINE_EXECUTOR}; drop one of them")
    return executor or (OFFLINE_EXECUTOR if mock else DEFAULT_EXECUTOR)


def judge_executor_name(executor: str, judging: Judging) -> str:
    """The grader model-graded judges use: --judge-executor, else the executor's own when it
    can grade, else the mock grader."""
    return judging.executor or (executor if can_grade(executor) else OFFLINE_EXECUTOR)


__all__ = [
    "MAX_SAMPLES",
    "MOCK_FLAG",
    "can_grade",
    "check_arm_flags",
    "check_budget",
    "check_choices",
    "check_counts",
    "check_executors",
    "check_inputs",
    "check_offline_shorthands",
    "check_scale",
    "check_shorthand_values",
    "executor_named",
    "executor_of_flags",
    "judge_executor_name",
]
