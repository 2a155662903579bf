"""Executors run one task with one arm's skill and return the model's output; the ones that
can also grade give model-graded judges their grader."""

from .base import (
    ExecutorBase,
    ExecutorConfig,
    ExecutorSpec,
    compose_prompt,
    create_executor,
    create_grader,
    executor_names,
    get_executor_spec,
    grader_names,
    register_executor,
)
from .grader import Grader, GradeRequest, GraderSettings, Reply

__all__ = [
    "ExecutorBase",
    "ExecutorConfig",
    "ExecutorSpec",
    "GradeRequest",
    "Grader",
    "GraderSettings",
    "Reply",
    "compose_prompt",
    "create_executor",
    "create_grader",
    "executor_names",
    "get_executor_spec",
    "grader_names",
    "register_executor",
]
