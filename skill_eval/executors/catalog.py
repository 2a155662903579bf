"""What the rest of the harness asks about executors by name, answered from the registry
(each executor's ExecutorSpec): whether it is offline, serves a skill's files, has an option,
where agents load skills from. No list of executor names is kept anywhere else: a new
executor declares these on its spec and every answer here includes it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import fields
from typing import Any

from ..core import transcript
from ..core.transcript import SkillRoot
from ..core.work import ToolCall
from .base import REGISTRY, ExecutorSpec, executor_names


def _spec(name: str) -> ExecutorSpec | None:
    """Executor `name`'s spec, or None when nothing provides it here (a plugin executor a
    stored run names may be gone: it then has no capability)."""
    return REGISTRY.get(name)


def is_offline(name: str) -> bool:
    """Whether executor `name` has no model behind it (ExecutorSpec.offline: the mock)."""
    spec = _spec(name)
    return spec is not None and spec.offline


def serves_skill_files(name: str) -> bool:
    """Whether executor `name` lets the model read a skill's other files in system and
    prepend mode (ExecutorSpec.serves_skill_files)."""
    spec = _spec(name)
    return spec is not None and spec.serves_skill_files


def loads_skills(name: str) -> bool:
    """Whether executor `name` is an agent that loads skills from a folder of its workspace
    (ExecutorSpec.skill_roots): a skill folder installed there is delivered as it ships."""
    spec = _spec(name)
    return spec is not None and bool(spec.skill_roots)


def has_option(name: str, option: str) -> bool:
    """Whether executor `name`'s config schema has `option` (`batch`, `claude_bin`, ...)."""
    spec = _spec(name)
    return spec is not None and option in (spec.schema.get("properties") or {})


def executors_where(test: Callable[[ExecutorSpec], bool]) -> list[str]:
    """Every registered executor whose spec passes `test`, by name (imports them all)."""
    return [n for n in executor_names() if (s := _spec(n)) is not None and test(s)]


def executors_with_option(option: str) -> list[str]:
    """The executors whose config has `option`: what a shorthand flag of `run` applies to."""
    return executors_where(lambda s: option in (s.schema.get("properties") or {}))


def pinned_packages() -> dict[str, str]:
    """The npm package each registered agent CLI is pinned at (ExecutorSpec.package), as
    {package: version}: what an image a jail runs must hold (jail/agent_image.py)."""
    pins: dict[str, str] = {}
    for name in executor_names():
        spec = _spec(name)
        if spec is not None and spec.package:
            package, _, version = spec.package.rpartition("@")
            pins[package] = version
    return pins


def skill_roots() -> tuple[SkillRoot, ...]:
    """Every folder, over the registered executors, an agent loads a project's skills from
    (ExecutorSpec.skill_roots) as (parent, folder) pairs: a Read of `<root>/<name>/SKILL.md`
    in any of them loads skill <name> (core/transcript.py)."""
    found: dict[SkillRoot, None] = {}
    for name in executor_names():
        spec = _spec(name)
        for root in spec.skill_roots if spec is not None else ():
            parent, _, folder = root.rpartition("/")
            found[(parent, folder)] = None
    return tuple(found)


def skill_invocations(
    calls: Iterable[ToolCall], skill_name: str | None, *, plugin_names: bool = True
) -> tuple[ToolCall, ...]:
    """core.transcript.skill_invocations with every registered agent's skill folders."""
    return transcript.skill_invocations(
        calls, skill_name, roots=skill_roots(), plugin_names=plugin_names
    )


def runs_jailed(name: str) -> bool:
    """Whether executor `name` starts its work in the run's jail (an agent CLI): its config
    has the `jail` field the run fills (plan/executor_options.py executor_config)."""
    spec = _spec(name)
    return spec is not None and "jail" in {f.name for f in fields(spec.config_cls)}


def invokes_skill(tool: str, tool_input: Any, skill: str) -> bool:
    """core.transcript.invokes_skill with every registered agent's skill folders."""
    return transcript.invokes_skill(tool, tool_input, skill, roots=skill_roots())


__all__ = [
    "executors_where",
    "executors_with_option",
    "has_option",
    "invokes_skill",
    "is_offline",
    "loads_skills",
    "pinned_packages",
    "runs_jailed",
    "serves_skill_files",
    "skill_invocations",
    "skill_roots",
]
