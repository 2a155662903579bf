"""Judges decide whether one output passes a task. See `base` for the seam."""

from .base import (
    Judge,
    JudgeContext,
    JudgeSpec,
    build_judge,
    get_judge_spec,
    judge_types,
    register_judge,
    run_judge,
    validate_judge_config,
)

__all__ = [
    "Judge",
    "JudgeContext",
    "JudgeSpec",
    "build_judge",
    "get_judge_spec",
    "judge_types",
    "register_judge",
    "run_judge",
    "validate_judge_config",
]
