"""A `--mock-outputs` file: read and checked (YAML or JSON; `{task_id: output}` for every arm
alike, or keyed by arm: `{candidate: {...}, baseline: {...}}` or any arm label), and the
questions a run asks of it (is it keyed by arm, which keys name arms, does it name a task
the suite does not have). The mock executor (mock.py) answers from it; mock_coverage.py says
what it leaves unscripted."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import yaml

from ..core.model import ARM_NAMES
from ..core.safeyaml import describe_syntax_error
from ..core.utf8 import NotUtf8, utf8_text
from ..core.validation import closest_name
from ..errors import UsageError
from .mock_work import OUTPUT_KEYS, check_output, clean_output


class MockOutputsError(UsageError):
    """A mock outputs file that cannot be used; `detail` says why, `line` where (when known)."""

    def __init__(self, path: Path, detail: str, line: int | None = None) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {detail}", path=str(path))
        self.detail = detail
        self.line = line


def load_mock_outputs(path: Path) -> dict[str, Any]:
    """Read and check a mock outputs file (YAML or JSON, JSON being YAML)."""
    text = ""
    try:
        text = utf8_text(path.read_bytes())
        # JSON is YAML, but the JSON parser reads a 50 MB output in a blink, YAML's in minutes.
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except FileNotFoundError:
        raise MockOutputsError(path, "mock outputs file not found") from None
    except yaml.MarkedYAMLError as exc:
        message, line = describe_syntax_error(exc, text)
        raise MockOutputsError(path, f"cannot read mock outputs: {message}", line) from None
    except NotUtf8 as exc:  # in the words a suite's YAML gets (core/utf8.py)
        raise MockOutputsError(path, str(exc), exc.line) from None
    except json.JSONDecodeError as exc:
        raise MockOutputsError(
            path, f"cannot read mock outputs: {exc.msg} (column {exc.colno})", exc.lineno
        ) from None
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
        raise MockOutputsError(path, f"cannot read mock outputs: {exc}".splitlines()[0]) from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise MockOutputsError(path, "mock outputs must be a mapping of task id to text")
    per_arm = keyed_by_arm(data)
    tables = _arm_tables(data) if per_arm else {"": data}
    for arm, table in tables.items():
        if not isinstance(table, Mapping):
            raise MockOutputsError(path, f"{arm}: must be a mapping of task id to text")
        for task_id, output in table.items():
            if (problem := check_output(output)) is not None:
                where = f"{arm}.{task_id}" if arm else str(task_id)
                raise MockOutputsError(path, f"{where}: {problem}")
    if per_arm:
        extra = [k for k in data if k not in ARM_NAMES and not isinstance(data[k], Mapping)]
        if extra:
            raise MockOutputsError(
                path,
                f"{extra[0]}: mix of per-arm and per-task keys; use either "
                "{task_id: text} or {candidate: ..., baseline: ...}",
            )
    if not per_arm:
        return {t: clean_output(x) for t, x in data.items()}
    return {k: {t: clean_output(x) for t, x in (v or {}).items()} for k, v in data.items()}


def _is_table(value: Any) -> bool:
    """An arm's table of task outputs, not one scripted agent output ({text, files, tools})."""
    return isinstance(value, Mapping) and bool(value) and not set(value) <= OUTPUT_KEYS


def keyed_by_arm(data: Mapping[str, Any]) -> bool:
    """Keyed by arm: a key is candidate/baseline, or some value is a table of its own."""
    return any(k in ARM_NAMES or _is_table(v) for k, v in data.items())


def arm_keys(data: Mapping[str, Any]) -> list[str]:
    """The keys of a file keyed by arm that name an arm (candidate, baseline, or any label
    whose value is a table of task outputs), in the file's order."""
    return [k for k, v in data.items() if k in ARM_NAMES or _is_table(v)]


def _arm_tables(data: Mapping[str, Any]) -> dict[str, Any]:
    """Each arm's table: candidate and baseline always (empty when absent), then any other
    arm label the file names."""
    others = [k for k in arm_keys(data) if k not in ARM_NAMES]
    return {a: data.get(a) or {} for a in (*ARM_NAMES, *others)}


def check_mock_tasks(path: Path, outputs: Mapping[str, Any], task_ids: Collection[str]) -> None:
    """A task id the suite does not have is a typo that would silently fall back to
    MOCK_OUTPUT (and fail every judge): an error with the nearest id as a hint."""
    tables = _arm_tables(outputs) if keyed_by_arm(outputs) else {"": outputs}
    for arm, table in tables.items():
        for task_id in table:
            if task_id in task_ids:
                continue
            where = f"{arm}.{task_id}" if arm else str(task_id)
            close = closest_name(str(task_id), task_ids)
            hint = (
                f"did you mean {close!r}?"
                if close is not None
                else f"the suite's tasks are {', '.join(sorted(task_ids)[:10])}"
            )
            raise MockOutputsError(path, f"{where}: no task {task_id!r} in the suite; {hint}")


__all__ = [
    "MockOutputsError",
    "arm_keys",
    "check_mock_tasks",
    "keyed_by_arm",
    "load_mock_outputs",
]
