"""`mock`: a deterministic executor with no network, the one CI and the tests use.

By default every prompt gets MOCK_OUTPUT. `--mock-outputs FILE` scripts it: `{task_id: text}`
gives both arms the same text, `{candidate: {...}, baseline: {...}}` gives each arm its own;
a task missing from the file falls back to MOCK_OUTPUT.

In installed skill mode the mock installs nothing, but records in each result's
`meta["would_install"]` the files installed mode would copy (paths under .claude/skills/), so
an installed-mode suite dry-runs honestly.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ..errors import UsageError
from ..model import ARM_NAMES, ExecutionRequest, ExecutionResult, clean_text
from ..skills.install import plan_install
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
        meta: dict[str, Any] = {}
        if self.config.skill_mode == "installed" and request.skill is not None:
            meta["would_install"] = plan_install(request.skill).files
        return ExecutionResult(output=output, meta=meta)

    def describe(self) -> dict[str, Any]:
        return {"kind": "mock", "model": self.config.model,
                "temperature": self.config.temperature, "max_tokens": self.config.max_tokens,
                "skill_mode": self.config.skill_mode, "outputs": dict(self.outputs),
                **({"installs": "nothing (each result's meta lists what it would install)"}
                   if self.config.skill_mode == "installed" else {})}


register_executor("mock", MockExecutor)
