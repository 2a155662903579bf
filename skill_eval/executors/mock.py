"""`mock`: a deterministic executor with no network, the one CI and the tests use.

By default every prompt gets MOCK_OUTPUT. `--mock-outputs FILE` scripts it: `{task_id: text}`
gives both arms the same text, `{candidate: {...}, baseline: {...}}` gives each arm its own;
a task missing from the file falls back to MOCK_OUTPUT.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import yaml

from ..errors import UsageError
from ..model import ARM_NAMES, ExecutionRequest, ExecutionResult, clean_text
from .base import ExecutorBase, ExecutorConfig, register_executor

MOCK_OUTPUT = "Mock execution output: no model was called."


def load_mock_outputs(path: Path) -> dict[str, Any]:
    """Read and check a mock outputs file (YAML or JSON, JSON being YAML)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{path}: mock outputs file not found") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise UsageError(f"{path}: cannot read mock outputs: {exc}".splitlines()[0]) from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise UsageError(f"{path}: mock outputs must be a mapping of task id to text")
    per_arm = any(k in ARM_NAMES for k in data)
    tables = {a: data.get(a) or {} for a in ARM_NAMES} if per_arm else {"": data}
    for arm, table in tables.items():
        if not isinstance(table, Mapping):
            raise UsageError(f"{path}: {arm}: must be a mapping of task id to text")
        for task_id, text in table.items():
            if not isinstance(text, str):
                where = f"{arm}.{task_id}" if arm else str(task_id)
                raise UsageError(f"{path}: {where}: output must be a string")
    if per_arm:
        extra = [k for k in data if k not in ARM_NAMES]
        if extra:
            raise UsageError(f"{path}: {extra[0]}: mix of per-arm and per-task keys; "
                             "use either {task_id: text} or {candidate: ..., baseline: ...}")
    # Scripted text is model output as far as the run is concerned: lone surrogates go.
    return {k: ({t: clean_text(x) for t, x in v.items()} if isinstance(v, Mapping)
                else clean_text(v)) for k, v in data.items()}


def check_mock_tasks(path: Path, outputs: Mapping[str, Any], task_ids: Collection[str]) -> None:
    """A task id the suite does not have is a typo that would silently fall back to
    MOCK_OUTPUT (and fail every judge): an error with the nearest id as a hint."""
    per_arm = any(k in ARM_NAMES for k in outputs)
    tables = {a: outputs.get(a) or {} for a in ARM_NAMES} if per_arm else {"": outputs}
    for arm, table in tables.items():
        for task_id in table:
            if task_id in task_ids:
                continue
            where = f"{arm}.{task_id}" if arm else str(task_id)
            close = difflib.get_close_matches(str(task_id), list(task_ids), n=1)
            hint = f"did you mean {close[0]!r}?" if close else \
                f"the suite's tasks are {', '.join(sorted(task_ids)[:10])}"
            raise UsageError(f"{path}: {where}: no task {task_id!r} in the suite; {hint}")


class MockExecutor(ExecutorBase):
    name = "mock"

    def __init__(self, config: ExecutorConfig) -> None:
        self.config = config
        self.outputs: Mapping[str, Any] = config.mock_outputs or {}

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        table = self.outputs
        if any(k in ARM_NAMES for k in table):
            table = table.get(request.arm) or {}
        output = table.get(request.task.id, MOCK_OUTPUT)
        return ExecutionResult(output=output)

    def describe(self) -> dict[str, Any]:
        return {"kind": "mock", "model": self.config.model,
                "temperature": self.config.temperature, "max_tokens": self.config.max_tokens,
                "skill_mode": self.config.skill_mode, "outputs": dict(self.outputs)}


register_executor("mock", MockExecutor)
