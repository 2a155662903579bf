"""A suite read from eval sets, written as the task_suite.yaml it maps to: what `import`
writes, and what a run keeps in its run directory as the record of what it ran (parsing
writes nothing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ...core.model import Suite
from ...core.paths import atomic_write_text

RECORD_NAME = "task_suite.yaml"  # in a run directory: the suite a run of eval sets ran


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (prompts) as `|` blocks, so the suite reads like a hand-written one."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value.strip("\n") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def render_suite(data: Any, header: str) -> str:
    """The suite `data` as YAML, `header` as comment lines above it."""
    body = yaml.dump(dict(data), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return "".join(f"# {line}\n" for line in header.splitlines()) + body


def write_record(suite: Suite, folder: Path) -> Path | None:
    """Write the suite an eval set made into `folder` (a run directory); None for a suite
    file, which is its own record. Its input files stay in the skill folder it names."""
    if suite.source is None:
        return None
    files = " and ".join(str(p) for p in suite.source.files)
    header = (
        f"The suite skill-eval ran, read from {files} ({suite.source.format}).\n"
        f"Input files are relative to {suite.directory}."
    )
    path = folder / RECORD_NAME
    atomic_write_text(path, render_suite(suite.source.data, header))
    return path


__all__ = ["RECORD_NAME", "render_suite", "write_record"]
