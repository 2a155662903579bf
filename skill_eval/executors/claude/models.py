"""The `claude-cli` model services beside its executor: the grader (model-graded judges) and
the text model (review roles, the improver).

Each reply is one Claude Code run exactly as an attempt is run (launch.py: the same jail,
binary, environment and stream reader), with our system prompt instead of Claude Code's and
no tools. The grader reads a judgement only between the request's nonce tags and never
raises; the text model returns the reply's text and raises TextModelError when there is none.
"""

from __future__ import annotations

from dataclasses import replace

from ...core.failure import Failure
from ...core.model import ExecutionResult
from ...errors import ExecutorError
from ..grader import GradeRequest, GraderSettings, Reply, answer_format, extract_judgement
from ..text_model import TextModelError, TextModelSettings, TextReply, TextRequest
from . import binary as binaries
from .config import ClaudeCliConfig
from .launch import Invocation, Launcher

TEXT_MAX_RETRIES = 2  # the CLI's own retries for a text reply: no runner retries it
EMPTY_MCP = '{"mcpServers":{}}'


def reply_arguments(model: str) -> tuple[str, ...]:
    """A single reply: no tools, no MCP servers, no settings, skills or session files."""
    return (
        "--model",
        model,
        "--tools=",
        "--setting-sources=",
        "--strict-mcp-config",
        f"--mcp-config={EMPTY_MCP}",
        "--disable-slash-commands",
        "--no-session-persistence",
    )


def _launcher(config: ClaudeCliConfig) -> Launcher:
    return Launcher(config, binaries.resolve(config.claude_bin))


def _reply(
    launcher: Launcher, system: str, prompt: str, model: str, timeout: float
) -> ExecutionResult | None:
    """One reply of `model` to `prompt` under `system`; None when no CLI was found (neither
    the host's nor, in a jail that runs its image's programs, the image's)."""
    if launcher.program() is None:
        return None
    try:
        launcher.check()  # no jail here (and no --no-jail): say so, never a traceback
        done = launcher.run(
            Invocation(
                reply_arguments(model),
                prompt,
                timeout,
                system_prompt=system,
                system_flag="--system-prompt-file",  # ours replaces Claude Code's
            )
        )
    except (OSError, ExecutorError) as exc:  # JailBroken and JailUnavailable are these
        return ExecutionResult(failure=Failure(f"cannot run claude CLI: {exc}"))
    if done.ended.timed_out:
        return ExecutionResult(failure=Failure.transient(f"timed out after {timeout:g}s"))
    if done.ended.overflow:
        return ExecutionResult(failure=Failure("the reply's stream went past its cap"))
    return done.reader.result(done.ended.code, done.ended.stderr)


class ClaudeCliGrader:
    name = "claude-cli"

    def __init__(self, config: ClaudeCliConfig, settings: GraderSettings) -> None:
        self.config = config
        self.settings = settings
        self._launcher = _launcher(config)

    def complete(self, request: GradeRequest) -> Reply:
        try:
            return self._complete(request)
        except Exception as exc:  # a judge must never raise into the runner
            return Reply(
                None,
                "",
                model=request.model,
                error=f"claude-cli judge call failed: {type(exc).__name__}: {exc}",
                transient=False,
            )

    def _complete(self, request: GradeRequest) -> Reply:
        model = request.model
        text = (
            f"{request.prompt}\n\nNo tools are available here: instead of calling "
            f"{request.tool_name}, answer in text. {answer_format(request)}"
        )
        result = _reply(self._launcher, request.system, text, model, self.settings.timeout)
        if result is None:
            return Reply(
                None,
                "",
                model=model,
                error="claude CLI not found in PATH (needed by --judge-executor "
                "claude-cli). Install it or use --mock for testing.",
                transient=False,
            )
        if (failure := result.failure) is not None:
            return Reply(
                None,
                result.output,
                result.usage,
                model,
                f"claude CLI judge failed: {failure.message[:300]}",
                transient=failure.retry,  # a failure that stops the run is never retried
            )
        data, error = extract_judgement(result.output, request.nonce)
        return Reply(
            data,
            result.output,
            result.usage,
            model,
            None if error is None else f"claude CLI {error}",
        )


class ClaudeCliTextModel:
    """One Claude Code reply per request, run as a judgement is (our system prompt, no tools,
    no settings, a throw-away HOME, the jail)."""

    name = "claude-cli"

    def __init__(self, config: ClaudeCliConfig, settings: TextModelSettings) -> None:
        retries = TEXT_MAX_RETRIES if settings.sdk_retries is None else settings.sdk_retries
        self.config = replace(config, claude_max_retries=retries)
        self.settings = settings
        self._launcher = _launcher(self.config)

    def complete(self, request: TextRequest) -> TextReply:
        timeout = self.settings.timeout
        result = _reply(self._launcher, request.system, request.prompt, request.model, timeout)
        if result is None:
            raise TextModelError(binaries.not_found_message(self.config.claude_bin))
        if (failure := result.failure) is not None:
            raise TextModelError(
                f"{request.label}: claude CLI failed: {failure.message.splitlines()[0][:300]}"
            )
        return TextReply(result.output, result.usage, request.model)
