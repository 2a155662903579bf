"""The executor seam: `Executor.run(request) -> ExecutionResult` with its lifecycle
(`ExecutorBase`), an `ExecutorSpec` per executor (its own config dataclass and JSON Schema,
how to build it and its grader), the registry keyed by name, and how a skill is delivered to
the model (`--skill-mode`).

An executor never raises for a failed attempt: it returns a result with `error` set and says
whether a retry may help. It raises ExecutorError only when it cannot run at all.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..core.budget import Budget
from ..core.execution import SKILL_MODES as SKILL_MODES
from ..core.execution import SkillMode as SkillMode
from ..core.model import ExecutionRequest, ExecutionResult, Skill, Task
from ..core.registry import Registry
from ..errors import ExecutorError
from .builtin import BUILTIN_EXECUTORS
from .builtin import DEFAULT_EXECUTOR as DEFAULT_EXECUTOR
from .builtin import OFFLINE_EXECUTOR as OFFLINE_EXECUTOR
from .grader import Grader, GraderSettings
from .pricing import PriceTable, load_price_table
from .request_frame import AGENT_OVERHEAD, AGENT_TURNS, RequestFrame
from .text_model import TextModel, TextModelSettings

if TYPE_CHECKING:
    from .batches import BatchLog

# Bumped whenever the text wrapped around a skill or task changes: cached results depend on it.
PROMPT_TEMPLATE_VERSION = "2"  # 2: a folder skill's file list follows SKILL.md
# The model when neither --model nor SKILL_EVAL_MODEL names one (executors and judges alike).
# The newest Sonnet the pinned SDK knows; sonnet-4-5 reaches end of life on 2026-11-30.
DEFAULT_MODEL = "claude-sonnet-5-5"
# The model of the cheap checks (model-graded judges, trigger queries) when none is named:
# a Haiku-class model, so a rubric or a trigger suite does not run at the candidate's price
# (references/cost.md). --judge-model and --trigger-model name another.
CHEAP_MODEL = "claude-haiku-5-5"


@dataclass(frozen=True)
class ExecutorConfig:
    """What every executor's config has; each executor's own config extends it with its
    fields (`MockConfig`, `AnthropicConfig`, `ClaudeCliConfig`)."""

    skill_mode: SkillMode = "system"
    model: str | None = None


class Executor(Protocol):
    """The seam: one request in, one result out. A bare object with this method is a whole
    plugin executor; `lifecycle()` gives it ExecutorBase's defaults for everything else."""

    def run(self, request: ExecutionRequest) -> ExecutionResult: ...


class ExecutorBase:
    """Everything the runner and the conductor ask of an executor, each with its default: a
    subclass overrides what it offers, and nothing is looked up by name or probed for.

    - `run(request)`: one attempt (the protocol); never raises for a failed attempt.
    - `name`, `config`: its registry name and its own config, from which the registry builds
      it again in another process (a Ray worker).
    - `uses_workspace`, `can_act`, `can_trigger`, `skills_dir`, `context_file`: what it can
      do (below); the conductor refuses a suite (or an arm) before any call when it needs
      what the executor cannot.
    - `check_run(tasks, arms, strict)`, `preflight()`, `describe()`, `cancel()`: before a
      run (its own inputs against the run's tasks and arms; whether it can run here), for the
      artifact and the run's fingerprint, on Ctrl-C.
    - `concurrency_level`: (level, ceiling) when it adapts its own concurrency, for progress.
    - `prepares_requests`, `prepare(requests, log)`, `prepared_output(request)`: batch mode.
    - `prices`, `use_budget(budget)`, `request_frame(task, skilled)`: its calls' cost, the budget
      (core/budget.py), and what an attempt sends, for the estimate.
    """

    name = "base"
    # Its own config dataclass (an ExecutorConfig subclass, or a plugin's own config class).
    config: Any = None
    # Whether attempts run in a working directory: the runner then makes one per attempt
    # (`request.workspace`), snapshots it and deletes it after judging (text executors: no).
    uses_workspace = False
    # Whether the agent can act (tools that read and write files): agent tasks (`files:`,
    # `allowed_tools:`) need it; a text-only executor (the Messages API) refuses them up front.
    can_act = False
    # Whether it can tell if an agent invokes the arm's skill: it honours a request's
    # ExecutionSettings (an installed skill, the tools, `stop_on_skill`). Trigger tasks need it.
    can_trigger = False
    # Where an arm's skill can go besides the prompt (--arm, --skill-mode; references/arms.md):
    # `skills_dir`, the workspace folder its agent finds skills in, into which it installs the
    # skill's folder (deliveries installed and nudged); `context_file`, the always-on context
    # file its agent reads from the working directory, into which it writes the skill
    # (delivery and skill mode `context`: skills/context.py), loading that one file and
    # nothing else of the kind. None: it cannot deliver that way, and such an arm is refused
    # before any call. An executor honours the request's mode (`request.settings.mode(...)`).
    skills_dir: str | None = None
    context_file: str | None = None
    # Whether it wants every request of a run before the jobs start (`prepare`), with the run's
    # BatchLog; the judgements of what `prepared_output` answered are batched too.
    prepares_requests = False
    # What its calls cost (--price-file over the built-in table: executors/pricing.py), and
    # the run's budget (None: no cap), charged each reply as it comes where the executor can
    # (its result then `charged`; the runner charges any other: engine/jobs.py).
    prices: PriceTable = load_price_table()
    budget: Budget | None = None

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        raise NotImplementedError

    def use_budget(self, budget: Budget | None) -> None:
        """Charge this run's model calls to `budget` (the runner gives it the run's meter)."""
        self.budget = budget

    def request_frame(self, task: Task, skilled: bool) -> RequestFrame:
        """An attempt's frame (request_frame.py); `skilled`: its arm has a skill."""
        if self.can_act and task.is_agent_task:
            return RequestFrame(AGENT_OVERHEAD, AGENT_TURNS, tool_turns=True)
        return RequestFrame()

    def preflight(self) -> None:
        """Raise ExecutorError when the executor cannot run here (missing binary, key...)."""

    def check_run(self, tasks: Sequence[Task], arms: Sequence[str], *, strict: bool) -> list[str]:
        """Its own inputs checked against the run before any call: the suite's tasks and the
        arms it runs (by name). A UsageError for what cannot be meant; a warning line for
        each gap, which with `strict` (run --strict) is a UsageError instead. The mock checks
        its scripted outputs; an executor with no inputs of its own has nothing to say."""
        return []

    def run_notes(self, tasks: Sequence[Task], arms: Sequence[str]) -> list[str]:
        """What the run's summary must say of its inputs because it changes how the verdict
        reads (not a gap to fix before the run: said at the end, with the verdict). The mock:
        every arm gets the same scripted outputs. Nothing by default."""
        return []

    def describe(self) -> dict[str, Any]:
        """What identifies this executor's results: kind, version, model, isolation."""
        model = self.config.model if isinstance(self.config, ExecutorConfig) else None
        return {"kind": self.name, "model": model}

    def describe_arm(self, arm: str) -> dict[str, Any]:
        """What identifies one arm's results alone (the baseline cache's key): `describe()`,
        less what only other arms get (the mock's outputs scripted per arm)."""
        return self.describe()

    def cancel(self) -> None:
        """Stop every attempt still running (kill subprocesses, delete temp dirs)."""

    @property
    def concurrency_level(self) -> tuple[int, int] | None:
        """(current, ceiling) concurrency when the executor adapts it; None: it does not."""
        return None

    def prepare(self, requests: Sequence[ExecutionRequest], log: BatchLog) -> None:
        """With `prepares_requests`: get ready to answer these requests (send them as a
        batch, journaling through `log`); `run` then answers each from what came back."""

    def prepared_output(self, request: ExecutionRequest) -> str | None:
        """The whole output `prepare` already holds for `request` (no tool turn follows), or
        None: what the judgement batch may judge before the attempt runs."""
        return None


class _Adapted(ExecutorBase):
    """A bare `run()` object (a plugin) given the default lifecycle."""

    def __init__(self, inner: Executor, name: str, config: Any) -> None:
        self.inner, self.name, self.config = inner, name, config

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        return self.inner.run(request)


def lifecycle(executor: Executor, name: str, config: Any) -> ExecutorBase:
    """`executor` itself when it declares the lifecycle (an ExecutorBase), else wrapped."""
    return executor if isinstance(executor, ExecutorBase) else _Adapted(executor, name, config)


@dataclass(frozen=True)
class ExecutorSpec:
    """An executor: its `--executor` name, its config dataclass and the JSON Schema of that
    config, how to build it, and (optionally) the grader model-graded judges use when
    `--judge-executor` names it, and the text model review roles and the improver use when
    `review --executor` or `improve --improver` names it."""

    name: str
    config_cls: type[Any]
    schema: Mapping[str, Any]
    build: Callable[[Any], Executor]
    grader: Callable[[Any, GraderSettings], Grader] | None = None
    summary: str = ""
    text_model: Callable[[Any, TextModelSettings], TextModel] | None = None
    # What differs between executors and is read without building one (executors/catalog.py):
    # `offline`: no model behind it (the mock): it installs or writes no skill (it records
    # what it would), and its grader's fixed judgements are kept in memory, not the judge
    # cache. `serves_skill_files`: in system and prepend mode the model can read the skill's
    # other files (a read_skill_file tool). `skill_roots`: the workspace folders its agent
    # loads a project's skills from (a Read of `<root>/<name>/SKILL.md` loads skill <name>).
    offline: bool = False
    serves_skill_files: bool = False
    skill_roots: tuple[str, ...] = ()
    # `package`: the npm package its agent CLI is pinned at, `name@version` ("" for none):
    # what installs it, and what an image a jail runs must hold (executors/catalog.py).
    package: str = ""

    def config(self, values: Mapping[str, Any] | None = None, **more: Any) -> Any:
        """This executor's config from plain values, checked against `schema` first; an
        unknown or ill-typed field is an ExecutorError naming it."""
        from ..core.validation import schema_problems  # jsonschema only once a config is built

        merged = {**(values or {}), **more}
        plain = {
            k: (list(v) if isinstance(v, tuple) else str(v) if isinstance(v, Path) else v)
            for k, v in merged.items()
            if v is not None
        }
        problems = schema_problems(plain, self.schema)
        if problems:
            first = problems[0]
            raise ExecutorError(
                f"executor {self.name!r}: {first.field or 'config'}: {first.message}"
            )
        known = {f.name for f in fields(self.config_cls)}
        return self.config_cls(**{k: v for k, v in merged.items() if k in known})


def config_schema(config_cls: type[Any], properties: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON Schema of a config dataclass: `properties` plus the common fields."""
    common = {
        "skill_mode": {"enum": list(SKILL_MODES)},
        "model": {"type": "string", "minLength": 1},
    }
    props = {**common, **properties}
    missing = {f.name for f in fields(config_cls)} - set(props)
    if missing:  # a programming error in the executor's module, caught by its first import
        raise TypeError(f"{config_cls.__name__}: no schema for {sorted(missing)}")
    return {"type": "object", "properties": props, "additionalProperties": False}


def deferred(module: str, name: str) -> Callable[..., Any]:
    """A factory calling `name` of `module` (relative to this package), imported only when the
    factory is first called: an executor's grader or text model loads when it is used."""

    def build(*args: Any) -> Any:
        from importlib import import_module

        return getattr(import_module(module, __package__), name)(*args)

    return build


def _coerce(value: Any) -> ExecutorSpec:
    """What a `skill_eval.executors` entry point may load: an ExecutorSpec, or a zero-argument
    callable returning one."""
    if callable(value) and not isinstance(value, ExecutorSpec):
        value = value()
    if not isinstance(value, ExecutorSpec):
        raise TypeError(f"expected an ExecutorSpec, got {type(value).__name__}")
    return value


REGISTRY: Registry[ExecutorSpec] = Registry(
    kind="executor",
    valid="valid executors",
    group="skill_eval.executors",
    package=__package__ or "skill_eval.executors",
    builtins=BUILTIN_EXECUTORS,
    coerce=_coerce,
    name_of=lambda spec: spec.name,
)


def register_executor(
    spec: ExecutorSpec | str, factory: Callable[[Any], Executor] | None = None
) -> ExecutorSpec:
    """Register an executor spec. The older form `register_executor(name, factory)` still
    works: the factory gets an `ExecutorConfig` (skill_mode and model only)."""
    if isinstance(spec, str):
        if factory is None:
            raise TypeError("register_executor(name, factory) needs a factory")
        spec = ExecutorSpec(
            name=spec,
            config_cls=ExecutorConfig,
            schema=config_schema(ExecutorConfig, {}),
            build=factory,
        )
    return REGISTRY.register(spec)


def env_lookup(env: Mapping[str, str] | None) -> Callable[[str], str | None]:
    """A variable from `env` (the run's explicit environment) first, then the process
    environment; "" counts as unset."""

    def lookup(name: str) -> str | None:
        if env is not None and env.get(name):
            return env[name]
        return os.environ.get(name) or None

    return lookup


def executor_names() -> list[str]:
    return REGISTRY.names()


def get_executor_spec(name: str) -> ExecutorSpec:
    spec = REGISTRY.get(name)
    if spec is None:
        raise ExecutorError(REGISTRY.unknown(name))
    return spec


def create_executor(name: str, config: Any = None) -> ExecutorBase:
    """Build executor `name` from its own config (an instance of its `config_cls`, or a mapping
    of its fields; None for the defaults)."""
    spec = get_executor_spec(name)
    own = _own_config(spec, config)
    return lifecycle(spec.build(own), name, own)


def _own_config(spec: ExecutorSpec, config: Any) -> Any:
    """`config` as the executor's own config class: a mapping of its fields, None for the
    defaults, or the common ExecutorConfig (its fields carried over, the rest defaulted)."""
    if config is None or isinstance(config, Mapping):
        return spec.config(config)
    if type(config) is ExecutorConfig and spec.config_cls is not ExecutorConfig:
        return spec.config({"skill_mode": config.skill_mode, "model": config.model})
    return config


def create_grader(name: str, config: Any = None, settings: GraderSettings | None = None) -> Grader:
    """The grader of executor `name`, for model-graded judges."""
    spec = get_executor_spec(name)
    if spec.grader is None:
        raise ExecutorError(
            f"executor {name!r} cannot grade: model-graded judges need one of "
            f"{', '.join(grader_names())}"
        )
    return spec.grader(_own_config(spec, config), settings or GraderSettings())


def grader_names() -> list[str]:
    """The executors that can also grade (the `--judge-executor` choices)."""
    return [n for n in executor_names() if (s := REGISTRY.get(n)) and s.grader is not None]


def create_text_model(
    name: str, options: Mapping[str, Any] | None = None, settings: TextModelSettings | None = None
) -> TextModel:
    """The text model of executor `name`, for review roles and the improver. Its config is
    built from the `options` its config class has (`claude_bin` means nothing to `anthropic`:
    dropped), checked against its schema; ExecutorError when it offers no text model."""
    spec = get_executor_spec(name)
    if spec.text_model is None:
        raise ExecutorError(
            f"executor {name!r} cannot serve as a model (review roles, the improver): "
            f"use one of {', '.join(text_model_names())}"
        )
    known = {f.name for f in fields(spec.config_cls)}
    own = spec.config({k: v for k, v in (options or {}).items() if k in known})
    return spec.text_model(own, settings or TextModelSettings())


def text_model_names() -> list[str]:
    """The executors that can also answer in text (review roles, the improver)."""
    return [n for n in executor_names() if (s := REGISTRY.get(n)) and s.text_model is not None]


SKILL_BEGIN = "---BEGIN SKILL.MD---"
SKILL_END = "---END SKILL.MD---"


def compose_prompt(
    skill: Skill | None, task_prompt: str, mode: SkillMode, files_note: str | None = None
) -> tuple[str | None, str]:
    """(system prompt, user message) for one attempt. `installed` delivers the skill as files
    and `context` as the agent's context file, so the text goes nowhere here. `files_note`
    (what else the skill's folder holds, for an executor that lets the model read it) follows
    SKILL.md. Both arms get the same template; only the skill differs."""
    if mode in ("installed", "context"):
        return None, task_prompt
    note = f"\n\n{files_note}" if skill is not None and files_note else ""
    if mode == "system":
        return (skill.content + note if skill else None), task_prompt
    if skill is None:
        return None, f"Task: {task_prompt}"
    return None, f"{SKILL_BEGIN}\n{skill.content}\n{SKILL_END}{note}\n\nTask: {task_prompt}"
