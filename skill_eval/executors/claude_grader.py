"""The `claude-cli` grader: one `claude -p` judgement, run exactly as an attempt is run
(claude_process: same binary lookup, same environment allow-list, throw-away HOME and config
dir, process-group kill, same envelope parser). Our system prompt replaces Claude Code's, no
tools are offered, and the judgement is read only between the request's nonce tags. Never raises."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from .claude_cli import ClaudeCliConfig
from .claude_process import (
    EMPTY_MCP,
    copy_credentials,
    env_lookup,
    find_claude,
    isolated_env,
    kill_group,
    parse_envelope,
)
from .grader import GradeRequest, GraderSettings, Reply, answer_format, extract_judgement

TEMP_PREFIX = "skill-eval-judge-cli-"


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


class ClaudeCliGrader:
    name = "claude-cli"

    def __init__(self, config: ClaudeCliConfig, settings: GraderSettings) -> None:
        self.config = config
        self.settings = settings
        self._env = env_lookup(config.env)

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
        home = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))  # 0700; may hold credentials
        try:
            (home / ".claude").mkdir()
            copy_credentials(self._env, home / ".claude")
            env = isolated_env(
                home,
                self._env,
                max_retries=str(self.config.claude_max_retries),
                base_url=self.config.base_url,
                extra=self.config.env,
            )
            proc = subprocess.Popen(
                cli_command(binary, request.system, model),
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
                return Reply(
                    None, "", model=model, error=f"claude CLI judge timed out after {timeout:g}s"
                )
            finally:
                kill_group(proc)  # whatever the CLI left running in its group goes too
        finally:
            shutil.rmtree(home, ignore_errors=True)
        return reply_from_envelope(stdout, stderr, proc.returncode, model, request.nonce)


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
