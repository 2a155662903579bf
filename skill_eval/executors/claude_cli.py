"""`claude-cli`: runs each attempt through the Claude Code CLI (`claude -p --output-format json`),
isolated from the user's own Claude Code set-up so that neither arm sees their skills.

Each attempt runs with a throw-away HOME and CLAUDE_CONFIG_DIR (HOME/.claude), so
~/.claude/CLAUDE.md, ~/.claude/skills, plugins, hooks, settings and MCP servers never load. The
working directory is the runner's workspace (`request.workspace`, which the runner keeps or
deletes after judging); HOME is its private parent directory, so the CLI's upward search for
project skills stops there. Without a workspace (the executor used on its own) a fresh 0700
temp dir holds HOME and HOME/work. Whatever the executor put there itself (config dir,
credentials, installed skill) is deleted after the call, and `cancel()` deletes every such
directory still there before it returns.

Authentication keeps working: ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN and
CLAUDE_CODE_OAUTH_TOKEN pass through; without them, only the subscription credentials file
(`<config dir>/.credentials.json`) is copied into the temp config dir. A token the CLI refreshes
there is not written back, so for long runs prefer `claude setup-token` and
CLAUDE_CODE_OAUTH_TOKEN. On macOS the login lives in the Keychain, which the temp config dir
cannot reach: use CLAUDE_CODE_OAUTH_TOKEN there.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core.bounded import MAX_STREAM_BYTES
from ..core.model import ExecutionRequest, ExecutionResult
from ..errors import ExecutorError
from ..skills.install import install_skill
from .base import ExecutorBase, ExecutorConfig, ExecutorSpec, compose_prompt, config_schema
from .bounded_pipe import communicate_bounded, overflow_message
from .claude_process import (
    EMPTY_MCP,
    ISOLATION_ENV,
    NO_HOOKS,
    NOT_FOUND,
    copy_credentials,
    credentials_source,
    env_lookup,
    find_claude,
    has_auth,
    isolated_env,
    kill_group,
    not_found_message,
    parse_envelope,
)
from .version_cache import cached_version, probe_version

# Re-exported: callers and tests know them as the executor's.
__all__ = [
    "NOT_FOUND",
    "ClaudeCliConfig",
    "ClaudeCliExecutor",
    "build_command",
    "find_claude",
    "install_skill",
    "kill_group",
    "parse_envelope",
    "tool_args",
]

TEMP_PREFIX = "skill-eval-claude-"
NO_AUTH = (
    "no Claude Code authentication found: export ANTHROPIC_API_KEY=..., or run "
    "`claude setup-token` and export CLAUDE_CODE_OAUTH_TOKEN=..., or log in with `claude` "
    "(credentials in ~/.claude/.credentials.json); or use --mock"
)


@dataclass(frozen=True)
class ClaudeCliConfig(ExecutorConfig):
    claude_bin: str | None = None
    max_turns: int | None = None
    allowed_tools: tuple[str, ...] = ()
    base_url: str | None = None
    env: Mapping[str, str] | None = None  # read before the process environment; passed on
    claude_max_retries: int = 0  # the CLI's own retries; the runner retries, with backoff
    version_cache: str | None = None  # JSON file remembering `claude --version` per binary


def tool_args(config: ClaudeCliConfig) -> list[str]:
    """`--tools` (the built-in tools offered) and `--allowedTools` (run without asking).
    No tools unless `allowed_tools` names some; `installed` mode adds Skill, the tool through
    which Claude Code loads a skill, to both arms alike."""
    specs = list(config.allowed_tools)
    names = list(dict.fromkeys(spec.split("(", 1)[0].strip() for spec in specs))
    if config.skill_mode == "installed" and "Skill" not in names:
        names.append("Skill")
        specs.append("Skill")
    args = [f"--tools={','.join(names)}"]
    if specs:
        args.append(f"--allowedTools={','.join(specs)}")
    return args


def build_command(
    binary: str, config: ClaudeCliConfig, model: str | None, system_file: Path | None
) -> list[str]:
    """The argv of one attempt; the prompt goes on stdin (no argv limits, not shown by ps)."""
    installed = config.skill_mode == "installed"
    cmd = [
        binary,
        "-p",
        "--output-format",
        "json",
        "--no-session-persistence",
        "--strict-mcp-config",
        f"--mcp-config={EMPTY_MCP}",
        f"--settings={NO_HOOKS}",
        # `project` lets the skill copied into <cwd>/.claude/skills load; cwd is ours.
        f"--setting-sources={'project' if installed else ''}",
    ]
    if not installed:
        cmd.append("--disable-slash-commands")
    cmd += tool_args(config)
    if model:
        cmd += ["--model", model]
    if config.max_turns is not None:
        cmd += ["--max-turns", str(config.max_turns)]
    if system_file is not None:
        # Appended, not replacing: both arms keep Claude Code's own system prompt, as users do.
        cmd += ["--append-system-prompt-file", str(system_file)]
    return cmd


@dataclass(frozen=True)
class Finished:
    """What a CLI process left: its output streams, exit code, and whether it timed out."""

    stdout: str
    stderr: str
    returncode: int | None
    timed_out: bool = False
    overflow: bool = False  # stopped for writing past MAX_STREAM_BYTES (bounded_pipe.py)


def overflow_result() -> ExecutionResult:
    """An attempt whose message stream went past MAX_STREAM_BYTES: the agent's doing (what
    the stream holds is what it read and printed), so a failure, not retried."""
    return ExecutionResult(
        error=overflow_message(MAX_STREAM_BYTES), retryable=False, output_caused=True
    )


def timeout_result(timeout: float, **more: Any) -> ExecutionResult:
    """An attempt that ran past its time: retried (a slow service may heal), then counted as
    the output's failure (the agent ran past its task's time)."""
    return ExecutionResult(
        error=f"claude CLI timed out after {timeout:g}s (process group killed)",
        retryable=True,
        output_caused=True,
        meta={"error_type": "timeout"},
        **more,
    )


class ClaudeCliExecutor(ExecutorBase):
    """One isolated `claude -p` process per attempt. Thread-safe."""

    name = "claude-cli"
    uses_workspace = True
    can_act = True  # Claude Code's tools act in the attempt's workspace
    can_trigger = True  # an installed skill, its Skill tool, and a stop at its invocation

    def __init__(self, config: ClaudeCliConfig) -> None:
        self.config = config
        self._env = env_lookup(config.env)
        self.model = config.model or self._env("SKILL_EVAL_MODEL")
        self.max_retries = str(config.claude_max_retries)
        self._version: str | None = None
        self._version_lock = threading.Lock()
        self._lock = threading.Lock()  # guards _live
        self._live: set[subprocess.Popen[str]] = set()
        # Held while a temp dir is created or filled, and by cancel() while it deletes them
        # all: a directory cancel() removed is never re-created by an attempt still preparing.
        self._dirs_lock = threading.Lock()
        self._dirs: set[Path] = set()  # temp dirs made and not yet deleted
        self._cancelled = threading.Event()

    def binary(self) -> str | None:
        return find_claude(self.config.claude_bin)

    def credentials_source(self) -> Path | None:
        """The subscription credentials file of the user's real config dir, when it exists."""
        return credentials_source(self._env)

    def preflight(self) -> None:
        if self.binary() is None:
            raise ExecutorError(not_found_message(self.config.claude_bin))
        if not has_auth(self._env):
            raise ExecutorError(NO_AUTH)

    def child_env(self, home: Path) -> dict[str, str]:
        """The whole environment of the CLI: what it needs, and nothing of the user's set-up."""
        return isolated_env(
            home,
            self._env,
            max_retries=self.max_retries,
            base_url=self.config.base_url,
            extra=self.config.env,
        )

    def _make_temp_dir(self) -> Path | None:
        """A new 0700 temp dir, tracked until `_remove_temp_dir`; None once cancelled."""
        with self._dirs_lock:
            if self._cancelled.is_set():
                return None
            root = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))  # mkdtemp makes it 0700
            self._dirs.add(root)
            return root

    def _remove_temp_dir(self, root: Path) -> None:
        with self._dirs_lock:
            shutil.rmtree(root, ignore_errors=True)
            self._dirs.discard(root)

    def _prepare(
        self, root: Path, request: ExecutionRequest
    ) -> tuple[Path, Path, Path | None] | None:
        """(home, workdir, system file) filled in `root`; None when cancel() came first."""
        with self._dirs_lock:
            if self._cancelled.is_set() or not root.is_dir():
                return None
            return self._fill(root, request)

    def _fill(self, root: Path, request: ExecutionRequest) -> tuple[Path, Path, Path | None]:
        # The working directory sits inside the temp HOME: Claude Code stops looking for
        # .claude/skills in parent directories at HOME, so skills of a project that happens to
        # contain TMPDIR cannot load (CLAUDE.md files are off by CLAUDE_CODE_DISABLE_CLAUDE_MDS).
        if request.workspace is not None:  # the runner's: its private parent becomes HOME
            workdir = Path(request.workspace)
            home = workdir.parent
            (home / ".claude").mkdir()
            self._dirs.add(home / ".claude")  # may hold credentials: cancel() deletes it
        else:
            home = root / "home"
            workdir = home / "work"
            home.mkdir()  # no parents=True: never re-create a root that cancel() deleted
            (home / ".claude").mkdir()
            workdir.mkdir()
        copy_credentials(self._env, home / ".claude")
        system_file = None
        mode = request.settings.mode(self.config.skill_mode)
        if mode == "installed" and request.skill is not None:
            if (workdir / ".claude").exists():
                raise OSError(
                    f"{workdir}: already holds a .claude directory; the skill under "
                    "test cannot be installed apart from it"
                )
            install_skill(request.skill, workdir)
        system, _ = compose_prompt(request.skill, request.task.prompt, mode)
        if system:
            system_file = root / "system-prompt.md"
            system_file.write_text(system, encoding="utf-8")
        return home, workdir, system_file

    def cancel(self) -> None:
        """Kill every running attempt's process group and delete every temp dir not yet
        deleted (they may hold a copy of the user's credentials) before returning; later
        attempts fail at once. Called by the runner on Ctrl-C or SIGTERM, just before the
        process exits without running other threads' clean-up."""
        self._cancelled.set()
        with self._lock:
            live = list(self._live)
        for proc in live:
            kill_group(proc)
        with self._dirs_lock:
            for root in list(self._dirs):
                shutil.rmtree(root, ignore_errors=True)
                if not root.exists():
                    self._dirs.discard(root)

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        if self._cancelled.is_set():
            return ExecutionResult(error="cancelled", retryable=False)
        binary = self.binary()
        if binary is None:
            return ExecutionResult(
                error=not_found_message(self.config.claude_bin), fatal=True
            )  # no attempt can run without it
        _, prompt = compose_prompt(request.skill, request.task.prompt, self.config.skill_mode)
        started = time.monotonic()

        def spawn(home: Path, workdir: Path, system_file: Path | None) -> ExecutionResult:
            cmd = build_command(binary, self.config, self.model, system_file)
            return self._spawn(cmd, workdir, self.child_env(home), prompt, request.timeout_seconds)

        result = self._in_attempt_dir(request, spawn)
        meta = {**result.meta, "latency_ms": int((time.monotonic() - started) * 1000)}
        return replace(result, meta=meta)

    def _in_attempt_dir(
        self, request: ExecutionRequest, work: Callable[[Path, Path, Path | None], ExecutionResult]
    ) -> ExecutionResult:
        """`work(home, workdir, system_file)` in a fresh temp root (`_prepare`): a cancel or an
        OS error becomes the result, and the root and the runner's workspace are cleaned up
        whatever happens."""
        root = self._make_temp_dir()
        if root is None:
            return ExecutionResult(error="cancelled", retryable=False)
        try:
            prepared = self._prepare(root, request)
            if prepared is None:
                result = ExecutionResult(error="cancelled", retryable=False)
            else:
                result = work(*prepared)
        except OSError as exc:
            result = ExecutionResult(error=f"cannot run claude CLI: {exc}", retryable=True)
        finally:
            self._remove_temp_dir(root)
            if request.workspace is not None:
                self._clean_workspace(Path(request.workspace))
        if self._cancelled.is_set():  # whatever failed after cancel() failed because of it
            result = ExecutionResult(error="cancelled", retryable=False)
        return result

    def _clean_workspace(self, workdir: Path) -> None:
        """Take back what this executor put in the runner's workspace and its parent: the
        config dir (credentials), anything the CLI wrote to HOME, the installed skill. The
        attempt's own files stay for the judges."""
        with self._dirs_lock:
            for entry in list(workdir.parent.iterdir()):
                if entry == workdir:
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)
                self._dirs.discard(entry)
            shutil.rmtree(workdir / ".claude", ignore_errors=True)

    def _spawn(
        self, cmd: list[str], cwd: Path, env: dict[str, str], prompt: str, timeout: float
    ) -> ExecutionResult:
        done = self._communicate(cmd, cwd, env, prompt, timeout)
        if done.timed_out:
            return timeout_result(timeout)
        if done.overflow:
            return overflow_result()
        if self._cancelled.is_set():
            return ExecutionResult(error="cancelled", retryable=False)
        return parse_envelope(done.stdout, done.stderr, done.returncode)

    def _communicate(
        self, cmd: list[str], cwd: Path, env: dict[str, str], stdin: str, timeout: float
    ) -> Finished:
        """Run `cmd` in a new session with `stdin`; on a timeout, cancel() or an exception the
        whole process group is killed (the CLI and anything it started)."""
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,
        )
        with self._lock:
            self._live.add(proc)
        if self._cancelled.is_set():  # cancel() ran between our check and the spawn
            kill_group(proc)
        try:  # at most MAX_STREAM_BYTES of the stream: what the agent makes it hold is its own
            piped = communicate_bounded(
                proc, stdin, timeout, MAX_STREAM_BYTES, lambda: kill_group(proc)
            )
        except BaseException:
            kill_group(proc)
            proc.wait()
            raise
        finally:
            kill_group(proc)  # whatever the CLI left running in its group goes too
            with self._lock:
                self._live.discard(proc)
        return Finished(
            piped.stdout, piped.stderr, proc.returncode, piped.timed_out, piped.overflow
        )

    def version(self) -> str | None:
        """`claude --version`, once per process (and per binary: see version_cache.py)."""
        with self._version_lock:  # not self._lock: cancel() must not wait for this
            binary = self.binary()
            if self._version is None and binary is not None:
                cache = Path(self.config.version_cache) if self.config.version_cache else None
                found = cached_version(binary, cache, lambda: self._probe_version(binary))
                if found is None or found.startswith("unknown"):
                    return found
                self._version = found
            return self._version if binary is not None else None

    def _probe_version(self, binary: str) -> str | None:  # isolated like an attempt
        tmp = self._make_temp_dir()
        if tmp is None:
            return None
        try:
            return probe_version(binary, tmp, self.child_env(tmp))
        finally:
            self._remove_temp_dir(tmp)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "claude-cli",
            "version": self.version(),
            "model": self.model,
            "skill_mode": self.config.skill_mode,
            "isolation": {
                "flags": build_command("claude", self.config, None, None)[1:],
                "system_prompt": "--append-system-prompt-file (skill appended to Claude Code's)"
                if self.config.skill_mode == "system"
                else None,
                "env": {**ISOLATION_ENV, "CLAUDE_CODE_MAX_RETRIES": self.max_retries},
                "home": "temporary per attempt",
                "claude_config_dir": "temporary per attempt; only .credentials.json copied "
                "when no API key or token is set",
                "working_directory": "temporary per attempt, deleted afterwards",
                "max_turns": self.config.max_turns,
                "allowed_tools": list(self.config.allowed_tools),
            },
        }


def _grader(config: ClaudeCliConfig, settings: Any) -> Any:
    from .claude_grader import ClaudeCliGrader

    return ClaudeCliGrader(config, settings)


def _text_model(config: ClaudeCliConfig, settings: Any) -> Any:
    from .claude_grader import ClaudeCliTextModel

    return ClaudeCliTextModel(config, settings)


SPEC = ExecutorSpec(
    name="claude-cli",
    summary="one isolated `claude -p` process per attempt (Claude Code)",
    config_cls=ClaudeCliConfig,
    schema=config_schema(
        ClaudeCliConfig,
        {
            "claude_bin": {"type": ["string", "null"], "format": "command"},
            "max_turns": {"type": ["integer", "null"], "minimum": 1},
            "allowed_tools": {"type": "array", "items": {"type": "string"}},
            "base_url": {"type": ["string", "null"]},
            "env": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
            "claude_max_retries": {"type": "integer", "minimum": 0},
            "version_cache": {"type": ["string", "null"], "format": "path"},
        },
    ),
    build=ClaudeCliExecutor,
    grader=_grader,
    text_model=_text_model,
)
