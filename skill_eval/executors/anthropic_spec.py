"""The `anthropic` executor as the registry knows it: its options' schema, and which class a
config builds (every attempt sent live, or through the Message Batches API with `batch`)."""

from __future__ import annotations

from .anthropic_api import AnthropicConfig, AnthropicExecutor
from .anthropic_batch import BatchAnthropicExecutor
from .base import ExecutorSpec, config_schema, deferred


def _build(config: AnthropicConfig) -> AnthropicExecutor:
    return BatchAnthropicExecutor(config) if config.batch else AnthropicExecutor(config)


SPEC = ExecutorSpec(
    name="anthropic",
    serves_skill_files=True,  # the read_skill_file tool (tool_loop.py)
    summary="one Messages API call per attempt through the official SDK",
    config_cls=AnthropicConfig,
    schema=config_schema(
        AnthropicConfig,
        {
            "max_tokens": {"type": "integer", "minimum": 1},
            "temperature": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            "base_url": {"type": ["string", "null"]},
            "price_file": {"type": ["string", "null"], "format": "path"},
            "env": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
            "max_tool_turns": {"type": "integer", "minimum": 1},
            "batch": {"type": "boolean"},
            "concurrency": {"type": ["integer", "null"], "minimum": 1},
            "adaptive_concurrency": {"type": "boolean"},
        },
    ),
    build=_build,
    grader=deferred(".batch_grading", "BatchingAnthropicGrader"),  # loads when it grades
    text_model=deferred(".anthropic_grader", "AnthropicTextModel"),
)

__all__ = ["SPEC"]
