"""`claude-cli`: each attempt is one Claude Code run in a jail of its own (launch.py), in a
copy of the runner's workspace, isolated from the user's Claude Code set-up.

What the jail holds: the attempt's workspace and HOME (size-capped tmpfs), the system's
folders read-only, no network but the model API forwarded by the harness (which adds the
credentials: the agent holds a placeholder), its own PID namespace (nothing it starts
survives it). What Claude Code gets: a throw-away HOME and config dir, the allow-listed
environment plus ISOLATION_ENV, no setting sources (only `project` in installed mode, whose
skill is the only one there, and in context mode, whose CLAUDE.md written by skill-eval is the
only one there: context.py), no hooks, no MCP servers, the skill only in its arm. Each
attempt records its tool calls with their results (`transcript`), turns, stop reason and the
API requests the CLI resent (`api_retries`).
"""

from __future__ import annotations

import ctypes
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...core.bounded import MAX_STREAM_BYTES, mib
from ...core.budget import Budget
from ...core.failure import Failure
from ...core.model import ExecutionRequest, ExecutionResult, Task
from ...errors import ExecutorError
from ...jail.confine import abi
from ...jail.providers import isolated, missing, name_of
from ...jail.session import JailBroken
from ...skills.install import install_skill
from ..agent_launch import CliRuns, image_cli_version
from ..agent_spending import AgentSpending, stopped_attempt
from ..base import (
    CHEAP_MODEL,
    DEFAULT_MODEL,
    ExecutorBase,
    ExecutorSpec,
    compose_prompt,
    env_lookup,
)
from ..catalog import skill_invocations
from ..pricing import load_price_table
from ..request_frame import AGENT_TURNS, RequestFrame
from ..tool_check import checked, tampered
from . import binary as binaries
from . import context as claude_md
from .config import SCHEMA, ClaudeCliConfig
from .environment import ISOLATION_ENV, child_env, has_auth
from .footprint import frame_tokens
from .launch import Invocation, Launched, Launcher
from .tools import BashConfinement, ToolPlan, ToolPlanError, plan_tools, sandbox_available

NO_AUTH = (
    "no Claude Code authentication found: export ANTHROPIC_API_KEY=..., or run "
    "`claude setup-token` and export CLAUDE_CODE_OAUTH_TOKEN=..., or log in with `claude` "
    "(credentials in ~/.claude/.credentials.json); or use --mock"
)
EMPTY_MCP = '{"mcpServers":{}}'


def timeout_result(timeout: float, **more: Any) -> ExecutionResult:
    """An attempt that ran past its time: retried (a slow service may heal), then counted as
    the output's failure (the agent ran past its task's time)."""
    return ExecutionResult(
        failure=Failure.output(
            f"claude CLI timed out after {timeout:g}s (its jail killed)", retry=True
        ),
        meta={"error_type": "timeout"},
        **more,
    )


def overflow_result() -> ExecutionResult:
    """An attempt whose message stream went past MAX_STREAM_BYTES: the agent's doing (what
    the stream holds is what it read and printed), so a failure, not retried."""
    return ExecutionResult(
        failure=Failure.output(
            f"Claude Code wrote more than {mib(MAX_STREAM_BYTES)} of messages in one "
            "attempt; it was stopped and the attempt counts as a failure (skill-eval reads no "
            "more of one attempt)"
        ),
        meta={"error_type": "stream_over_cap"},
    )


def watched_outcome(result: ExecutionResult) -> ExecutionResult:
    """An attempt that watched for the skill's invocation (`stop_on_skill`), as the runner
    must count it. A run that used up its turns without invoking the skill has ended: judged
    (not triggered, unless the transcript shows the invocation). Anything else that went
    wrong (a timeout, a crash, an API error such as 529) stays an error, retried and
    reported, never "did not trigger", and never a failure caused by the output."""
    failure = result.failure
    if (
        failure is not None
        and result.meta.get("subtype") == "error_max_turns"
        and result.meta.get("api_error_status") is None
    ):
        return replace(result, failure=None, meta={**result.meta, "ended": "max turns"})
    if failure is not None and failure.ends_as == "failed":
        return replace(result, failure=replace(failure, ends_as="error"))
    return result


class ClaudeCodeExecutor(CliRuns, ExecutorBase):
    """One jailed Claude Code run per attempt. Thread-safe."""

    name = "claude-cli"
    uses_workspace = True
    can_act = True  # Claude Code's tools act in the attempt's workspace
    can_trigger = True  # an installed skill, its Skill tool, and a stop at its invocation
    skills_dir = ".claude/skills"
    context_file = claude_md.CONTEXT_FILE

    def __init__(self, config: ClaudeCliConfig) -> None:
        self.config = config
        self._env = env_lookup(config.env)
        # Passed as --model whatever Claude Code's own default: the verdict names its model.
        self.model = config.model or self._env("SKILL_EVAL_MODEL") or DEFAULT_MODEL
        self.trigger_model = (
            config.trigger_model or self._env("SKILL_EVAL_TRIGGER_MODEL") or CHEAP_MODEL
        )
        self.prices = load_price_table(Path(config.price_file) if config.price_file else None)
        # each reply the jail's forward relays, priced and charged; requests refused when spent
        self.spending = AgentSpending(self.prices, self.model)
        self._binary = binaries.resolve(config.claude_bin)
        self._launcher = Launcher(config, self._binary, self.spending)
        jailed = isolated(config.jail)
        self.bash = BashConfinement(
            jailed=jailed,
            landlock=jailed and _landlock(),
            sandbox=None if jailed else sandbox_available(),
            unsandboxed=config.unsandboxed_bash,
        )
        CliRuns.__init__(self)

    def binary(self) -> str | None:
        return self._launcher.program()

    def use_budget(self, budget: Budget | None) -> None:
        self.budget = self.spending.budget = budget

    def preflight(self) -> None:
        """Every reason this machine cannot run it, one line each (a dry run lists them)."""
        problems: list[ExecutorError] = []
        if self._launcher.program() is None:
            problems.append(ExecutorError(binaries.not_found_message(self.config.claude_bin)))
            if (no_jail := missing(self.config.jail)) is not None:  # the launcher's check
                problems.append(ExecutorError(no_jail))
        else:
            try:
                self._launcher.check()
            except ExecutorError as exc:
                problems.append(exc)
        if not has_auth(self._env):
            problems.append(ExecutorError(NO_AUTH))
        if len(problems) > 1:
            raise ExecutorError("\n".join(map(str, problems)))
        if problems:
            raise problems[0]

    def request_frame(self, task: Task, skilled: bool) -> RequestFrame:
        """Claude Code's prompt and the tools the task is offered in every request, its whole
        history cached; an agent task's several turns, a text task's one (two when a skill
        is installed: its Skill call first), a trigger attempt's one."""
        settings = task.execution_settings()
        installed = settings.mode(self.config.skill_mode) == "installed"
        specs = settings.tools if settings.tools is not None else self.config.allowed_tools
        try:
            tools = plan_tools(specs, installed=installed, bash=self.bash).tools
        except ToolPlanError:
            tools = tuple(specs)
        acts = task.is_agent_task and not settings.stop_on_skill
        invoked = installed and skilled and not settings.stop_on_skill
        turns = AGENT_TURNS if acts else 1 + invoked
        model = self.trigger_model if settings.stop_on_skill else self.model
        overhead = frame_tokens(model, [t.split("(", 1)[0] for t in tools])
        return RequestFrame(overhead, turns, tool_turns=acts, cache="conversation")

    def tool_plan(self, request: ExecutionRequest) -> ToolPlan:
        settings = request.settings  # the task's tools, else --allowed-tools
        specs = settings.tools if settings.tools is not None else self.config.allowed_tools
        return plan_tools(
            specs,
            installed=settings.mode(self.config.skill_mode) == "installed",
            bash=self.bash,
            task_id=request.task.id,
        )

    def arguments(self, plan: ToolPlan, request: ExecutionRequest) -> tuple[str, ...]:
        """The CLI's flags for one attempt (after `-p --output-format stream-json`)."""
        mode = request.settings.mode(self.config.skill_mode)
        installed = mode == "installed"
        args = [
            "--no-session-persistence",
            "--strict-mcp-config",
            f"--mcp-config={EMPTY_MCP}",
            f"--settings={plan.settings()}",
            # `project` lets the skill installed in the workspace (or the CLAUDE.md written
            # there) load; nothing else does.
            f"--setting-sources={'project' if mode in ('installed', 'context') else ''}",
            "--permission-mode",
            "acceptEdits",
            f"--tools={','.join(plan.tools)}",
        ]
        if plan.allowed:
            args.append(f"--allowedTools={','.join(plan.allowed)}")
        if not installed:
            args.append("--disable-slash-commands")
        # A trigger task asks whether the skill is picked up: a cheap check, at its own model.
        model = self.trigger_model if request.settings.stop_on_skill else self.model
        args += ["--model", model]
        if (turns := request.settings.turns(self.config.max_turns)) is not None:
            args += ["--max-turns", str(turns)]
        return tuple(args)

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        if self._cancelled.is_set():
            return ExecutionResult(failure=Failure("cancelled"))
        if self._launcher.program() is None:
            return ExecutionResult(
                failure=Failure.setup(binaries.not_found_message(self.config.claude_bin))
            )
        try:
            plan = self.tool_plan(request)
        except ToolPlanError as exc:  # every attempt of this task would fail alike
            return ExecutionResult(failure=Failure.setup(str(exc)))
        watch = request.settings.stop_on_skill  # a trigger task: did the agent invoke it?
        if watch and request.skill is None:
            return ExecutionResult(
                failure=Failure.setup(
                    f"trigger task {request.task.id!r} needs a skill in every arm"
                )
            )
        started = time.monotonic()
        try:
            result = self._attempt(request, plan, watch)
        except (OSError, JailBroken) as exc:
            result = ExecutionResult(failure=Failure.transient(f"cannot run claude CLI: {exc}"))
        finally:
            if request.workspace is not None:  # the installed skill is ours, not the agent's
                _remove_tree(Path(request.workspace) / ".claude")
                if request.settings.mode(self.config.skill_mode) == "context":
                    claude_md.remove(Path(request.workspace))
        if self._cancelled.is_set():  # whatever failed after cancel() failed because of it
            result = ExecutionResult(failure=Failure("cancelled"))
        result = watched_outcome(result) if watch else result
        meta = {
            **result.meta,
            "latency_ms": int((time.monotonic() - started) * 1000),
            "isolation": {**plan.isolation(), "jail": name_of(self.config.jail)},
        }
        if request.skill is not None and result.transcript:
            meta["skill_invocations"] = len(
                skill_invocations(result.transcript, request.skill.name)
            )
        return replace(result, meta=meta)

    def _attempt(self, request: ExecutionRequest, plan: ToolPlan, watch: bool) -> ExecutionResult:
        mode = request.settings.mode(self.config.skill_mode)
        system, prompt = compose_prompt(request.skill, request.task.prompt, mode)
        workspace = Path(request.workspace) if request.workspace is not None else None
        if mode == "installed" and request.skill is not None and workspace is not None:
            if (workspace / ".claude").exists():
                raise OSError(
                    f"{workspace}: already holds a .claude directory; the skill under "
                    "test cannot be installed apart from it"
                )
            install_skill(request.skill, workspace)
        context = mode == "context" and request.skill is not None and workspace is not None
        if context and (problem := claude_md.place(request, workspace, self.config.jail)):
            return ExecutionResult(failure=Failure.setup(problem))  # every attempt alike
        launched = self._launcher.run(
            Invocation(
                self.arguments(plan, request),
                prompt,
                request.timeout_seconds,
                system_prompt=system,
                workspace=workspace,
                stop_at_skill=request.skill.name if watch and request.skill else None,
                claude_md=context,
            )
        )
        if (nobody := self._launcher.unreachable()) is not None:  # no attempt could reach it
            return ExecutionResult(failure=Failure.setup(nobody), meta={"error_type": "refused"})
        log = launched.api
        if log is None:  # no jail (--no-jail): the CLI's own account of its cost
            return self._outcome(launched, request)
        if problem := checked(launched.reader, log):
            return self.spending.settle(tampered(problem, log), log)
        result = self.spending.settle(self._outcome(launched, request), log)
        why = self.spending.stopped(log)
        return result if why is None else stopped_attempt(why, result)

    def _outcome(self, launched: Launched, request: ExecutionRequest) -> ExecutionResult:
        """How the CLI's run ended: out of time, over the stream's cap, its result, or a
        workspace that could not be read back."""
        ended, reader = launched.ended, launched.reader
        if ended.timed_out:
            return timeout_result(request.timeout_seconds, transcript=reader.transcript())
        if ended.overflow:
            return overflow_result()
        result = reader.result(ended.code, ended.stderr)
        if launched.copied is not None and launched.copied.over is not None:
            over = launched.copied.over
            return replace(
                result,
                failure=Failure.output(f"the attempt's workspace could not be read back: {over}"),
            )
        return result

    def ask_version(self) -> str | None:
        if self._launcher.in_image():  # the image's CLI: the version its label records
            return image_cli_version(self.config.jail, SPEC.package)
        if self._binary is None:
            return None
        cache = Path(self.config.version_cache) if self.config.version_cache else None
        return binaries.version(
            self._binary, cache, child_env("/nonexistent", self._env, max_retries=0)
        )

    def describe(self) -> dict[str, Any]:
        plan = plan_tools(
            self.config.allowed_tools,
            installed=self.config.skill_mode == "installed",
            bash=replace(self.bash, unsandboxed=True, landlock=True),
        )
        return {
            "kind": "claude-cli",
            "driver": "stream-json",
            "version": self.version(),
            "model": self.model,
            "trigger_model": self.trigger_model,
            "prices": self.prices.describe(),
            "skill_mode": self.config.skill_mode,
            "isolation": {
                "jail": name_of(self.config.jail),
                "setting_sources": ["project"]
                if self.config.skill_mode in ("installed", "context")
                else [],
                **(
                    {"claude_md": claude_md.DESCRIBED}
                    if self.config.skill_mode == "context"
                    else {}
                ),
                "permission_mode": "acceptEdits",
                "settings": plan.settings(),
                "system_prompt": "Claude Code's + --append-system-prompt-file (skill)"
                if self.config.skill_mode == "system"
                else "Claude Code's",
                "env": {**ISOLATION_ENV, "CLAUDE_CODE_MAX_RETRIES": self.config.claude_max_retries},
                "home": "temporary per attempt",
                "working_directory": "a copy of the attempt's workspace",
                "max_turns": self.config.max_turns,
                "allowed_tools": list(self.config.allowed_tools),
                "bash": plan.isolation()["bash"] if "Bash" in plan.tools else "not offered",
            },
        }


def _landlock() -> bool:
    return abi(ctypes.CDLL(None, use_errno=True)) > 0


def _remove_tree(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink(missing_ok=True)


def _grader(config: ClaudeCliConfig, settings: Any) -> Any:
    from .models import ClaudeCliGrader

    return ClaudeCliGrader(config, settings)


def _text_model(config: ClaudeCliConfig, settings: Any) -> Any:
    from .models import ClaudeCliTextModel

    return ClaudeCliTextModel(config, settings)


SPEC = ExecutorSpec(
    name="claude-cli",
    # the CLI claude-agent-sdk bundles (the `agent` extra); scripts/install_claude_cli.sh
    package="@anthropic-ai/claude-code@2.1.330",
    skill_roots=(ClaudeCodeExecutor.skills_dir,),
    summary="one jailed Claude Code run per attempt (the CLI bundled by claude-agent-sdk, or "
    "`claude` on PATH)",
    config_cls=ClaudeCliConfig,
    schema=SCHEMA,
    build=ClaudeCodeExecutor,
    grader=_grader,
    text_model=_text_model,
)
