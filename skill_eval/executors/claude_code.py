"""`claude-cli`: each attempt runs Claude Code through claude-agent-sdk,
in the runner's fresh workspace, isolated from the user's Claude Code set-up.

Everything the hand-written driver (`claude_cli.py`) guarantees still holds, with its helpers:
a throw-away HOME and CLAUDE_CONFIG_DIR, the allow-listed environment plus ISOLATION_ENV, no
setting sources (only `project` in installed mode, whose skill is the only one there), no
hooks, no MCP servers, the skill only in its arm. What the SDK adds: the message stream, so
each attempt records its tool calls (`transcript`), turns and stop reason; and the CLI it
bundles (no npm step). The query runs in `sdk_child.py`, a process of its own in a new
session started with the isolated environment: the SDK passes its whole environment on and
starts the CLI without a process group, so this is how neither the user's variables leak in
nor anything survives a timeout (the whole group is SIGKILLed).

Without the SDK installed, `claude-cli` falls back to the hand-written driver for text tasks
and refuses agent tasks (it cannot confine their tools).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core.model import ExecutionRequest, ExecutionResult, Usage
from ..core.transcript import final_result, last_text, skill_invocations, tool_calls
from ..core.work import ToolCall
from . import sdk_child
from .base import compose_prompt, config_schema
from .claude_cli import SPEC as CLI_SPEC
from .claude_cli import ClaudeCliConfig, ClaudeCliExecutor, overflow_result, timeout_result
from .claude_process import EMPTY_MCP, ISOLATION_ENV, find_claude, not_found_message, parse_envelope
from .claude_tools import ToolPlan, ToolPlanError, plan_tools, sandbox_available
from .pricing import load_price_table

NEEDS_SDK = (
    "agent and trigger tasks (files, allowed_tools, should_trigger) need "
    "claude-agent-sdk to confine the agent to its workspace: "
    "pip install 'skill-eval[agent]'"
)
# Result fields of the SDK's ResultMessage that the record keeps.
RESULT_META = (
    "subtype",
    "num_turns",
    "stop_reason",
    "terminal_reason",
    "duration_ms",
    "duration_api_ms",
    "session_id",
    "api_error_status",
)


def sdk_location() -> Path | None:
    """The directory holding the `claude_agent_sdk` package, or None when not installed."""
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def bundled_cli() -> str | None:
    """The Claude Code binary the SDK's wheel ships, when there is one."""
    location = sdk_location()
    binary = location / "_bundled" / "claude" if location else None
    return str(binary) if binary is not None and binary.is_file() else None


@dataclass(frozen=True)
class ClaudeCodeConfig(ClaudeCliConfig):
    unsandboxed_bash: bool = False  # offer Bash without Claude Code's sandbox (not confined)


class ClaudeCodeExecutor(ClaudeCliExecutor):
    """One isolated Claude Code query per attempt through claude-agent-sdk. Thread-safe."""

    name = "claude-cli"
    uses_workspace = True

    def __init__(self, config: ClaudeCliConfig) -> None:
        super().__init__(config)
        self.unsandboxed_bash = bool(getattr(config, "unsandboxed_bash", False))
        self.sandbox = sandbox_available()

    def binary(self) -> str | None:
        """`--claude-bin` when given; else the SDK's bundled CLI; else `claude` on PATH."""
        if self.config.claude_bin:
            return find_claude(self.config.claude_bin)
        return bundled_cli() or find_claude(None)

    def tool_plan(self, request: ExecutionRequest) -> ToolPlan:
        settings = request.settings  # the task's tools, else --allowed-tools
        specs = settings.tools if settings.tools is not None else self.config.allowed_tools
        return plan_tools(
            specs,
            installed=settings.mode(self.config.skill_mode) == "installed",
            unsandboxed_bash=self.unsandboxed_bash,
            sandbox=self.sandbox,
            task_id=request.task.id,
        )

    def sdk_options(
        self,
        binary: str,
        plan: ToolPlan,
        workdir: Path,
        system_file: Path | None,
        request: ExecutionRequest,
    ) -> dict[str, Any]:
        """The ClaudeAgentOptions of one attempt, as JSON values."""
        installed = request.settings.mode(self.config.skill_mode) == "installed"
        extra: dict[str, str | None] = {"no-session-persistence": None, "mcp-config": EMPTY_MCP}
        if not installed:
            extra["disable-slash-commands"] = None
        if system_file is not None:
            # Appended from a file, not argv: a large skill would exceed argv's limits.
            extra["append-system-prompt-file"] = str(system_file)
        max_turns = request.settings.turns(self.config.max_turns)
        options: dict[str, Any] = {
            "cli_path": binary,
            "cwd": str(workdir),
            # Claude Code's own prompt in both arms, as users have it (None would blank it).
            "system_prompt": {"type": "preset", "preset": "claude_code"},
            "tools": list(plan.tools),
            "allowed_tools": list(plan.allowed),
            "permission_mode": "acceptEdits",
            # [] -> `--setting-sources=`: no user, project or local settings, CLAUDE.md, skills.
            "setting_sources": ["project"] if installed else [],
            "strict_mcp_config": True,
            "settings": plan.settings(),
            "extra_args": extra,
        }
        if self.model:
            options["model"] = self.model
        if max_turns is not None:
            options["max_turns"] = max_turns
        return options

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        if self._cancelled.is_set():
            return ExecutionResult(error="cancelled", retryable=False)
        binary = self.binary()
        if binary is None:
            return ExecutionResult(error=not_found_message(self.config.claude_bin), fatal=True)
        try:
            plan = self.tool_plan(request)
        except ToolPlanError as exc:  # every attempt of this task would fail alike
            return ExecutionResult(error=str(exc), fatal=True)
        watch = request.settings.stop_on_skill  # a trigger task: did the agent invoke it?
        if watch and request.skill is None:
            return ExecutionResult(
                error=f"trigger task {request.task.id!r} needs a skill in every arm", fatal=True
            )
        _, prompt = compose_prompt(
            request.skill, request.task.prompt, request.settings.mode(self.config.skill_mode)
        )
        started = time.monotonic()

        def query(home: Path, workdir: Path, system_file: Path | None) -> ExecutionResult:
            options = self.sdk_options(binary, plan, workdir, system_file, request)
            result = self._query(
                options,
                prompt,
                workdir,
                self.child_env(home),
                request.timeout_seconds,
                request.skill.name if watch and request.skill else None,
            )
            return watched_outcome(result) if watch else result

        result = self._in_attempt_dir(request, query)
        meta = {
            **result.meta,
            "latency_ms": int((time.monotonic() - started) * 1000),
            "isolation": plan.isolation(),
        }
        if request.skill is not None and result.transcript:
            meta["skill_invocations"] = len(
                skill_invocations(result.transcript, request.skill.name)
            )
        return replace(result, meta=meta)

    def _query(
        self,
        options: dict[str, Any],
        prompt: str,
        cwd: Path,
        env: dict[str, str],
        timeout: float,
        stop_at_skill: str | None = None,
    ) -> ExecutionResult:
        """Run sdk_child.py in a new session; on a timeout SIGKILL its whole group.
        `stop_at_skill`: end the query as soon as that skill is invoked (trigger tasks)."""
        location = sdk_location()
        payload = json.dumps(
            {
                "prompt": prompt,
                "options": options,
                "sys_path": [str(location.parent)] if location else [],
                "stop_at_skill": stop_at_skill,
            }
        )
        # -I: none of the user's PYTHON* variables or user site; the SDK's path comes along.
        done = self._communicate(
            [sys.executable, "-I", sdk_child.__file__], cwd, env, payload, timeout
        )
        if done.timed_out:
            return timeout_result(timeout, transcript=tool_calls(_messages(done.stdout)))
        if done.overflow:
            return overflow_result()
        if self._cancelled.is_set():
            return ExecutionResult(error="cancelled", retryable=False)
        return interpret(_messages(done.stdout), done.stderr, done.returncode)

    def describe(self) -> dict[str, Any]:
        plan = plan_tools(
            self.config.allowed_tools,
            installed=self.config.skill_mode == "installed",
            unsandboxed_bash=True,
            sandbox=self.sandbox,
        )
        return {
            "kind": "claude-cli",
            "driver": "claude-agent-sdk",
            "version": self.version(),
            "model": self.model,
            "skill_mode": self.config.skill_mode,
            "isolation": {
                "setting_sources": ["project"] if self.config.skill_mode == "installed" else [],
                "permission_mode": "acceptEdits",
                "settings": plan.settings(),
                "system_prompt": "claude_code preset + --append-system-prompt-file (skill)"
                if self.config.skill_mode == "system"
                else "claude_code preset",
                "env": {**ISOLATION_ENV, "CLAUDE_CODE_MAX_RETRIES": self.max_retries},
                "home": "temporary per attempt",
                "working_directory": "the attempt's workspace",
                "max_turns": self.config.max_turns,
                "allowed_tools": list(self.config.allowed_tools),
                "unsandboxed_bash": self.unsandboxed_bash,
                "sandbox": self.sandbox,
                "sdk": _sdk_version(),
            },
        }


def _sdk_version() -> str | None:
    try:
        return importlib.metadata.version("claude-agent-sdk")
    except importlib.metadata.PackageNotFoundError:
        return None


def _messages(stdout: str) -> list[dict[str, Any]]:
    out = []
    for line in stdout.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def interpret(
    messages: list[dict[str, Any]], stderr: str, returncode: int | None
) -> ExecutionResult:
    """The attempt's result from the message stream: the CLI's result (error classes as in
    `parse_envelope`: fatal 401/403/404, retryable 429/529/5xx), with the transcript."""
    transcript = tool_calls(messages)
    result = final_result(messages)
    if result is None and any(m.get("kind") == "stopped" for m in messages):
        # Stopped at the skill's invocation (trigger tasks): the answer is in the transcript.
        return _stopped(messages, transcript)
    if result is None:
        failure = next((m for m in messages if m.get("kind") == "exception"), None)
        tail = " | ".join(stderr.strip().splitlines()[-3:])[:500]
        why = (
            f"{failure.get('type')}: {failure.get('message')}"
            if failure
            else f"exit code {returncode}"
        )
        fatal = bool(failure and failure.get("type") == "CLINotFoundError")
        return ExecutionResult(
            error=f"claude CLI gave no result ({why})"[:1000]
            + (f"; stderr: {tail}" if tail else ""),
            retryable=not fatal,
            fatal=fatal,
            transcript=transcript,
            meta={"error_type": "no_result", "exit_code": returncode},
        )
    envelope = {
        k: result.get(k)
        for k in (*RESULT_META, "is_error", "result", "errors", "usage", "total_cost_usd")
    }
    envelope["modelUsage"] = result.get("model_usage")
    if not envelope.get("is_error") and not isinstance(envelope.get("result"), str):
        envelope["result"] = last_text(messages)
    parsed = parse_envelope(json.dumps(envelope, default=str), stderr, returncode)
    meta = {**parsed.meta, **{k: result[k] for k in RESULT_META if result.get(k) is not None}}
    denials = result.get("permission_denials")
    if isinstance(denials, list) and denials:
        meta["permission_denials"] = [
            str(d.get("tool_name")) if isinstance(d, dict) else str(d) for d in denials
        ]
    meta.pop("exit_code", None)  # the child's exit code says nothing about the CLI's
    return replace(parsed, transcript=transcript, meta=meta)


def _stopped(messages: list[dict[str, Any]], transcript: tuple[ToolCall, ...]) -> ExecutionResult:
    """An attempt stopped at the skill's invocation has no result message: its usage is the
    sum over the model's replies (each once, by message id), priced from the built-in table."""
    replies: dict[str, tuple[Any, Any]] = {}
    for m in messages:
        if m.get("kind") == "AssistantMessage" and isinstance(m.get("usage"), dict):
            replies[str(m.get("message_id") or len(replies))] = (m.get("model"), m["usage"])
    usage = sum((Usage.from_dict(u) for _, u in replies.values()), Usage())
    model = next((str(name) for name, _ in replies.values() if name), None)
    cost, note = load_price_table().cost(model, usage) if model else (0.0, None)
    meta: dict[str, Any] = {"stopped": "skill invoked"}
    if note:
        meta["price_note"] = note
    return ExecutionResult(
        output=last_text(messages), transcript=transcript, usage=usage, cost_usd=cost, meta=meta
    )


def watched_outcome(result: ExecutionResult) -> ExecutionResult:
    """An attempt that watched for the skill's invocation (`stop_on_skill`), as the runner
    must count it. A run that used up its turns without invoking the skill has ended: judged
    (not triggered, unless the transcript shows the invocation). Anything else that went
    wrong (a timeout, a crash, an API error such as 529) stays an error, retried and
    reported, never "did not trigger", and never a failure caused by the output."""
    if (
        result.error
        and result.meta.get("subtype") == "error_max_turns"
        and result.meta.get("api_error_status") is None
    ):
        return replace(
            result,
            error=None,
            retryable=False,
            output_caused=False,
            meta={**result.meta, "ended": "max turns"},
        )
    if result.output_caused:
        return replace(result, output_caused=False)
    return result


class _TextOnlyClaudeCli(ClaudeCliExecutor):
    """The hand-written driver, used when claude-agent-sdk is not installed: text tasks only."""

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        if request.task.is_agent_task or request.settings.stop_on_skill:
            return ExecutionResult(error=f"task {request.task.id!r}: {NEEDS_SDK}", fatal=True)
        return super().run(request)


def build(config: ClaudeCliConfig) -> ClaudeCliExecutor:
    if sdk_location() is not None:
        return ClaudeCodeExecutor(config)
    return _TextOnlyClaudeCli(config)


SPEC = replace(
    CLI_SPEC,
    summary="Claude Code per attempt, isolated, in its workspace (claude-agent-sdk; without "
    "it, `claude -p` for text tasks)",
    config_cls=ClaudeCodeConfig,
    schema=config_schema(
        ClaudeCodeConfig,
        {
            **{
                k: v
                for k, v in CLI_SPEC.schema["properties"].items()
                if k not in ("skill_mode", "model")
            },
            "unsandboxed_bash": {"type": "boolean"},
        },
    ),
    build=build,
)
