"""One execution as the executor seam sees it: the request (a task, an arm's skill, and how
this task must run where it says), the result, and its token usage.

`ExecutionSettings` is how a task kind asks executors to run it differently from the run's
configuration without any executor knowing the kind: its loader sets them on the Task (trigger
tasks, judges/triggers/tasks.py: the skill installed, a fixed tool set, a default turn limit, stop
once the skill is invoked), and the runner copies them into every request of that task.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .failure import Failure
from .work import ToolCall

if TYPE_CHECKING:  # model imports this module; the request only names its types
    from .model import ArmName, Skill, Task

# How a skill reaches the model: appended to the user message, as the system prompt,
# installed as a project skill the agent may invoke, or written into the agent's always-on
# context file (CLAUDE.md, AGENTS.md: `ExecutorBase.context_file`) (`--skill-mode`).
SkillMode = Literal["prepend", "system", "installed", "context"]
SKILL_MODES: tuple[SkillMode, ...] = ("prepend", "system", "installed", "context")
# How one arm of a run gets the skill (`--arm NAME=EXECUTOR:DELIVERY`): a skill mode, `nudged`
# (installed, plus NUDGE in the prompt), or `none` (the arm runs without the skill).
Delivery = Literal["installed", "context", "nudged", "system", "prepend", "none"]
DELIVERIES: tuple[Delivery, ...] = ("installed", "context", "nudged", "system", "prepend", "none")
# The one line a `nudged` arm's prompt ends with (the engine adds it: no executor writes it).
NUDGE = "Use the {name} skill for this task."


def delivery_mode(delivery: Delivery) -> SkillMode | None:
    """The skill mode a delivery runs its attempts in; None for `none` (no skill)."""
    if delivery == "none":
        return None
    return "installed" if delivery == "nudged" else delivery


def nudged(prompt: str, skill_name: str) -> str:
    """`prompt` with the nudge naming the skill on a line of its own at its end."""
    return f"{prompt.rstrip()}\n\n{NUDGE.format(name=skill_name)}"


# Attempt.meta key of an attempt that watched for its skill (`stop_on_skill`): the name of the
# skill its arm installed, so its judge (and a rejudge of the journal) knows whose invocation
# counts.
SKILL_META = "trigger_skill"


@dataclass(frozen=True)
class ExecutionSettings:
    """How one task must run, where it says; None (False) leaves the executor's own setting.
    Which executors honour them is declared, not guessed: `run` refuses a suite whose tasks
    need what its executor cannot do (ExecutorBase.can_act, can_trigger) before any call.

    `stop_on_skill`: the attempt watches for the arm's skill being invoked and ends there; it
    needs a skill, and a run that did not finish (a timeout, a crash) is an error, never an
    output-caused failure: it says nothing about whether the skill would have been invoked.

    `skill_mode` is also how an arm's delivery (`--arm`) reaches the executor: the runner sets
    it from the arm when the task fixes none, and every executor that reads its mode as
    `request.settings.mode(config.skill_mode)` honours it per request. `context` asks the
    executor to write the skill into its agent's always-on context file and let that one
    file load (skills/context.py); an executor that cannot declares `context_file = None`
    and is refused before any call."""

    max_turns: int | None = None  # the task's turn limit, over the executor's (--max-turns)
    default_max_turns: int | None = None  # when neither the task nor the executor sets one
    tools: tuple[str, ...] | None = None  # the tools offered, over the executor's
    skill_mode: SkillMode | None = None  # how the skill is delivered, over --skill-mode
    stop_on_skill: bool = False

    def mode(self, configured: SkillMode) -> SkillMode:
        """The skill mode an attempt of this task gets when the run is `configured` so."""
        return self.skill_mode or configured

    def turns(self, configured: int | None) -> int | None:
        """The turn limit: the task's, else the executor's `configured`, else the default."""
        return self.max_turns or configured or self.default_max_turns


@dataclass(frozen=True)
class ExecutionRequest:
    """One execution of one task with one arm's skill."""

    task: Task
    arm: ArmName
    attempt: int
    skill: Skill | None
    timeout_seconds: float
    # The attempt's working directory, made (and later kept or deleted) by the runner; None
    # when the runner made none (text-only executors may ignore it).
    workspace: Path | None = None
    # How this task must run (set by whoever builds the request from the task: the runner);
    # None: the task's own (`Task.execution_settings()`). Executors read `settings`.
    execution: ExecutionSettings | None = None

    @property
    def settings(self) -> ExecutionSettings:
        return self.execution if self.execution is not None else self.task.execution_settings()


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    @property
    def total(self) -> int:
        """Every token the call was billed for: input, cache writes and reads, output."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Usage:
        data = data or {}
        return cls(**{k: int(data.get(k) or 0) for k in cls().to_dict()})


@dataclass(frozen=True)
class ModelCall:
    """One model call a judgement (or another step) made: the model that answered, what it
    used, and whether it went through the Message Batches API (billed at a discount)."""

    model: str
    usage: Usage
    batch: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            **self.usage.to_dict(),
            **({"batch": True} if self.batch else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ModelCall:
        return cls(str(data.get("model") or ""), Usage.from_dict(data), bool(data.get("batch")))


@dataclass(frozen=True, init=False)
class ExecutionResult:
    """What an executor returns: an output to judge, or a `failure` saying why there is none
    and what the runner does with the attempt (core/failure.py: an error, the output's own
    failure, or the run stops; retried or not).

    Executors written before `Failure` pass its loose keywords instead (`error`, `retryable`,
    `fatal`, `retry_after`, `output_caused`); they still construct the same result, folded
    into `failure` by `Failure.from_flags`. Only the constructor takes them: a result is read
    through `failure`."""

    output: str = ""
    failure: Failure | None = None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    meta: Mapping[str, Any] = field(default_factory=dict)
    transcript: tuple[ToolCall, ...] = ()  # the agent's tool calls, when the executor has them
    # Its usage and cost were charged to the executor's budget reply by reply as they came
    # (core/budget.py); False: the runner charges them when the attempt returns.
    charged: bool = False

    def __init__(
        self,
        output: str = "",
        failure: Failure | None = None,
        *,
        usage: Usage | None = None,
        cost_usd: float = 0.0,
        meta: Mapping[str, Any] | None = None,
        transcript: tuple[ToolCall, ...] = (),
        charged: bool = False,
        error: str | None = None,
        retryable: bool = False,
        fatal: bool = False,
        retry_after: float | None = None,
        output_caused: bool = False,
    ) -> None:
        if failure is not None and not isinstance(failure, Failure):
            raise TypeError(f"ExecutionResult.failure must be a Failure, not {failure!r}")
        flagged = retryable or fatal or output_caused or retry_after is not None
        if error or flagged:
            failure = _from_keywords(failure, error, retryable, fatal, retry_after, output_caused)
        set_field = object.__setattr__  # frozen: the one place its fields are set
        set_field(self, "output", output)
        set_field(self, "failure", failure)
        set_field(self, "usage", Usage() if usage is None else usage)
        set_field(self, "cost_usd", cost_usd)
        set_field(self, "meta", {} if meta is None else meta)
        set_field(self, "transcript", transcript)
        set_field(self, "charged", charged)


def _from_keywords(
    failure: Failure | None,
    error: str | None,
    retryable: bool,
    fatal: bool,
    retry_after: float | None,
    output_caused: bool,
) -> Failure:
    """The Failure a plugin's loose keywords describe; a clear TypeError when they cannot."""
    if failure is not None:
        raise TypeError("ExecutionResult takes failure= or the error keywords, not both")
    if not error:
        raise TypeError("ExecutionResult: retryable/fatal/retry_after/output_caused need error=")
    return Failure.from_flags(
        error,
        retryable=retryable,
        fatal=fatal,
        retry_after=retry_after,
        output_caused=output_caused,
    )
