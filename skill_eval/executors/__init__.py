"""Executors run one task with one arm's skill and return the model's output."""

from .base import (
    ExecutorConfig,
    compose_prompt,
    create_executor,
    executor_names,
    register_executor,
)

__all__ = ["ExecutorConfig", "compose_prompt", "create_executor", "executor_names",
           "register_executor"]
