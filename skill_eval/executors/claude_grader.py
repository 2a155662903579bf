"""The `claude-cli` model services beside its executor: the grader and the text model.

Each reply is one `claude -p` run exactly as an attempt is run (claude_process: same binary
lookup, same environment allow-list, throw-away HOME and config dir, process-group kill, same
envelope parser), through `run_isolated`. Our system prompt replaces Claude Code's and no
tools are offered. The grader reads a judgement only between the request's nonce tags and
never raises; the text model (review roles, the improver) returns the reply's text and raises
TextModelError when there is none."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

from .claude_cli import ClaudeCliConfig
from .claude_process import (
    EMPTY_MCP,
    copy_credentials,
    env_lookup,
    find_claude,
    isolated_env,
    kill_group,
    not_found_message,
    parse_envelope,
)
from .grader import GradeRequest, GraderSettings, Reply, answer_format, extract_judgement
from .text_model import TextModelError, TextModelSettings, TextReply, TextRequest

TEMP_PREFIX = "skill-eval-judge-cli-"
TEXT_MAX_RETRIES = 2  # the CLI's own retries for a text reply: no runner retries it


def cli_command(binary: str, system: str, model: str) -> list[str]:
    """argv of one judgement: a single reply, our system prompt instead of Claude Code's, no
    tools, no MCP servers, no settings, skills or session files; the prompt goes on stdin."""
    return [
        binary,
        "-p",
        "--output-format",
        "json",
        "--model",
        model,
        "--system-prompt",
        system,
        "--tools=",
        "--setting-sources=",
        "--strict-mcp-config",
        f"--mcp-config={EMPTY_MCP}",
        "--disable-slash-commands",
        "--no-session-persistence",
    ]


class Finished(NamedTuple):
    """What one isolated `claude -p` run left: its output streams and exit code."""

    stdout: str
    stderr: str
    returncode: int | None


def run_isolated(
    config: ClaudeCliConfig, argv: list[str], text: str, timeout: float, retries: int
) -> Finished | None:
    """`argv` run as an attempt is (a throw-away HOME with the credentials copied, the
    allow-listed environment, the process group killed after), `text` on stdin; None when it
    timed out."""
    env_of = env_lookup(config.env)
    home = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))  # 0700; may hold credentials
    try:
        (home / ".claude").mkdir()
        copy_credentials(env_of, home / ".claude")
        env = isolated_env(
            home, env_of, max_retries=str(retries), base_url=config.base_url, extra=config.env
        )
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            cwd=home,
            env=env,
            start_new_session=True,
        )
        try:
            stdout, stderr = proc.communicate(text, timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            proc.communicate()
            return None
        finally:
            kill_group(proc)  # whatever the CLI left running in its group goes too
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return Finished(stdout, stderr, proc.returncode)


class ClaudeCliGrader:
    name = "claude-cli"

    def __init__(self, config: ClaudeCliConfig, settings: GraderSettings) -> None:
        self.config = config
        self.settings = settings

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
            )  # a bug here raises again

    def _complete(self, request: GradeRequest) -> Reply:
        model = request.model
        binary = find_claude(self.config.claude_bin)
        if not binary:
            return Reply(
                None,
                "",
                model=model,
                error="claude CLI not found in PATH (needed by --judge-executor "
                "claude-cli). Install it or use --mock for testing.",
                transient=False,
            )
        text = (
            f"{request.prompt}\n\nNo tools are available here: instead of calling "
            f"{request.tool_name}, answer in text. {answer_format(request)}"
        )
        timeout = self.settings.timeout
        argv = cli_command(binary, request.system, model)
        done = run_isolated(self.config, argv, text, timeout, self.config.claude_max_retries)
        if done is None:
            return Reply(
                None, "", model=model, error=f"claude CLI judge timed out after {timeout:g}s"
            )
        return reply_from_envelope(*done, model, request.nonce)


class ClaudeCliTextModel:
    """One `claude -p` reply per request, isolated as a judgement is (`cli_command`: our
    system prompt, no tools, no settings; a throw-away HOME)."""

    name = "claude-cli"

    def __init__(self, config: ClaudeCliConfig, settings: TextModelSettings) -> None:
        self.config = config
        self.settings = settings

    def complete(self, request: TextRequest) -> TextReply:
        binary = find_claude(self.config.claude_bin)
        if not binary:
            raise TextModelError(not_found_message(self.config.claude_bin))
        retries = self.settings.max_retries
        timeout = self.settings.timeout
        argv = cli_command(binary, request.system, request.model)
        retries = TEXT_MAX_RETRIES if retries is None else retries
        done = run_isolated(self.config, argv, request.prompt, timeout, retries)
        if done is None:
            raise TextModelError(f"{request.label}: claude CLI timed out after {timeout:g}s")
        result = parse_envelope(*done)
        if result.error is not None:
            raise TextModelError(
                f"{request.label}: claude CLI failed (exit {done.returncode}): "
                f"{result.error.splitlines()[0][:300] if result.error else ''}"
            )
        return TextReply(result.output, result.usage, request.model)


def reply_from_envelope(
    stdout: str, stderr: str, returncode: int | None, model: str, nonce: str
) -> Reply:
    """The judgement in a `claude -p` JSON envelope; an error says whether asking again may
    help (a 401 or 404 cannot; a 529 or a reply with no JSON object may)."""
    result = parse_envelope(stdout, stderr, returncode)
    if result.error is not None:
        return Reply(
            None,
            result.output,
            result.usage,
            model,
            f"claude CLI judge failed (exit {returncode}): {result.error[:300]}",
            transient=result.retryable and not result.fatal,
        )
    data, error = extract_judgement(result.output, nonce)
    return Reply(
        data, result.output, result.usage, model, None if error is None else f"claude CLI {error}"
    )
