"""The executor seam: `Executor.run(request) -> ExecutionResult`, a registry keyed by name,
and how a skill is delivered to the model (`--skill-mode`).

An executor never raises for a failed attempt: it returns a result with `error` set and says
whether a retry may help. It raises ExecutorError only when it cannot run at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from ..errors import ExecutorError
from ..model import ExecutionRequest, ExecutionResult, Skill

SkillMode = Literal["prepend", "system", "installed"]
SKILL_MODES: tuple[SkillMode, ...] = ("prepend", "system", "installed")
# Bumped whenever the text wrapped around a skill or task changes: cached results depend on it.
PROMPT_TEMPLATE_VERSION = "1"
# The model when neither --model nor SKILL_EVAL_MODEL names one (executors and judges alike).
# The newest Sonnet the pinned SDK knows; sonnet-4-5 reaches end of life on 2026-11-30.
DEFAULT_MODEL = "claude-sonnet-5-5"


@dataclass(frozen=True)
class ExecutorConfig:
    """Everything an executor may need; each executor reads the fields that concern it."""

    skill_mode: SkillMode = "system"
    model: str | None = None
    max_tokens: int = 4096
    temperature: float | None = None
    # mock
    mock_outputs: Mapping[str, Any] | None = None
    # claude-cli
    claude_bin: str | None = None
    max_turns: int | None = None
    allowed_tools: tuple[str, ...] = ()
    # anthropic
    base_url: str | None = None
    price_file: Path | None = None
    env: Mapping[str, str] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


class Executor(Protocol):
    def run(self, request: ExecutionRequest) -> ExecutionResult: ...


class ExecutorBase:
    """Optional conveniences shared by the built-in executors."""

    name = "base"
    config: ExecutorConfig
    # Whether attempts run in a working directory: the runner then makes one per attempt
    # (`request.workspace`), snapshots what changed in it and deletes it after judging. Text
    # executors leave it False and are spared a directory per attempt.
    uses_workspace = False

    def preflight(self) -> None:
        """Raise ExecutorError when the executor cannot run here (missing binary, key...)."""

    def describe(self) -> dict[str, Any]:
        """What identifies this executor's results: kind, version, model, isolation."""
        return {"kind": self.name, "model": self.config.model}


ExecutorFactory = Callable[[ExecutorConfig], Executor]
EXECUTORS: dict[str, ExecutorFactory] = {}
_loaded = False


def register_executor(name: str, factory: ExecutorFactory) -> None:
    EXECUTORS[name] = factory


def _load() -> None:
    global _loaded
    if _loaded:
        return
    from importlib.metadata import entry_points

    from . import builtin  # noqa: F401

    _loaded = True
    for ep in entry_points(group="skill_eval.executors"):
        try:
            register_executor(ep.name, ep.load())
        except Exception:
            continue


def executor_names() -> list[str]:
    _load()
    return sorted(EXECUTORS)


def create_executor(name: str, config: ExecutorConfig) -> Executor:
    _load()
    try:
        factory = EXECUTORS[name]
    except KeyError:
        raise ExecutorError(
            f"unknown executor {name!r}; valid executors: {', '.join(sorted(EXECUTORS))}"
        ) from None
    return factory(config)


SKILL_BEGIN = "---BEGIN SKILL.MD---"
SKILL_END = "---END SKILL.MD---"


def compose_prompt(skill: Skill | None, task_prompt: str, mode: SkillMode) \
        -> tuple[str | None, str]:
    """(system prompt, user message) for one attempt. `installed` delivers the skill as files,
    so the text goes nowhere here. Both arms get the same template; only the skill differs."""
    if mode == "installed":
        return None, task_prompt
    if mode == "system":
        return (skill.content if skill else None), task_prompt
    if skill is None:
        return None, f"Task: {task_prompt}"
    return None, f"{SKILL_BEGIN}\n{skill.content}\n{SKILL_END}\n\nTask: {task_prompt}"
