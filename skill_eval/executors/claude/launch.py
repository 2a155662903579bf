"""One Claude Code run, the one way every attempt, judgement and text reply runs the CLI:
`claude -p --output-format stream-json` in a jail of its own (jail/session.py), its stream
read as it arrives (stream.py), its workspace seeded and copied back.

    launcher = Launcher(config)                      # one per executor, grader or text model
    done = launcher.run(Invocation(args, prompt, timeout, workspace=ws, stop_at_skill="pdf"))
    done.reader.result(done.ended.code, done.ended.stderr)

No Python process per run: the harness starts the jail (bubblewrap, a few-millisecond holder,
the CLI) and reads the stream in the calling thread. With jail "none" (--no-jail) the same
steps run the CLI unconfined in host temporary folders.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from ...core.bounded import MAX_STREAM_BYTES
from ...errors import ExecutorError
from ...jail import JailKind, Limits, Mount, require
from ...jail.api_proxy import ApiProxy
from ...jail.copyout import Caps, Copied
from ...jail.session import RUN_DIR, Ended, JailBroken, JailedCommand
from ..base import env_lookup
from .binary import program_dir
from .config import ClaudeCliConfig
from .environment import api_credentials, child_env, cloud_provider, login_file, upstream
from .stream import StreamReader

SYSTEM_FILE = ".skill-eval-system-prompt.md"  # in the child's HOME
# An attempt's jail: Bun and Node reserve large address ranges, so memory is capped as
# writable data per process; the workspace, HOME and /tmp are tmpfs of `disk_mb` each.
AGENT_LIMITS = Limits(memory_mb=None, data_mb=8192, file_size_mb=1024, processes=1024, disk_mb=1024)
COPY_CAPS = Caps(files=10_000, file_bytes=256 * 1024 * 1024, total_bytes=1024 * 1024 * 1024)


@dataclass(frozen=True)
class Invocation:
    """One CLI run: `args` after `claude -p --output-format stream-json --verbose`, the
    prompt (stdin), the timeout; a system prompt (written to HOME and passed as a file with
    `system_flag`), the runner's workspace (seeded in, copied back), and the skill whose
    invocation ends the run (trigger tasks); whether the workspace's CLAUDE.md loads."""

    args: tuple[str, ...]
    prompt: str
    timeout: float
    system_prompt: str | None = None
    system_flag: str = "--append-system-prompt-file"
    workspace: Path | None = None
    stop_at_skill: str | None = None
    claude_md: bool = False  # load the workspace's CLAUDE.md (context mode: context.py)


@dataclass(frozen=True)
class Launched:
    """What one run left: the stream as read, how the CLI ended, what came back to the
    workspace (None without one)."""

    reader: StreamReader
    ended: Ended
    copied: Copied | None


class Launcher:
    """Runs the CLI for one executor (or grader, or text model); thread-safe."""

    def __init__(self, config: ClaudeCliConfig, binary: str) -> None:
        self.config, self.binary = config, binary
        self.lookup = env_lookup(config.env)
        self.jail: JailKind = "none" if config.jail == "none" else "bubblewrap"
        self._proxy: ApiProxy | None = None
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raise ExecutorError when no run can work here (no jail, another cloud's API)."""
        if self.jail == "none":
            return
        require(self.jail)
        if (cloud := cloud_provider(self.lookup, self.config.env)) is not None:
            raise ExecutorError(
                f"{cloud} is set: the jail reaches only the Anthropic API through skill-eval's "
                "forward; run with --no-jail to use another cloud's API"
            )

    def proxy(self) -> ApiProxy:
        with self._lock:
            if self._proxy is None:
                headers, _ = api_credentials(self.lookup)
                self._proxy = ApiProxy(upstream(self.lookup, self.config.base_url), headers)
            return self._proxy

    def run(self, invocation: Invocation) -> Launched:
        jailed = self.jail != "none"
        proxy = self.proxy() if jailed else None
        # (agent_shell.sh and confine.py are in the jail's own RUN_DIR, read-only)
        mounts = [Mount("ro", str(program_dir(self.binary)), program_dir(self.binary))]
        with JailedCommand(self.jail, AGENT_LIMITS, mounts=mounts, forward=proxy) as jail:
            env = child_env(
                jail.home,
                self.lookup,
                max_retries=self.config.claude_max_retries,
                base_url=self.config.base_url,
                extra=self.config.env,
                proxy=proxy,
                shell_prefix=f"{RUN_DIR}/agent_shell.sh" if jailed else None,
            )
            if jailed:
                env["SKILL_EVAL_PYTHON"] = sys.executable  # the shell prefix's interpreter
            if invocation.claude_md:
                env.pop("CLAUDE_CODE_DISABLE_CLAUDE_MDS", None)
            argv = [self.binary, "-p", "--output-format", "stream-json", "--verbose"]
            argv += invocation.args
            if invocation.system_prompt is not None:
                argv += [invocation.system_flag, f"{jail.home}/{SYSTEM_FILE}"]
            jail.start(argv, env)
            self._seed(jail, invocation)
            reader = StreamReader(stop_at_skill=invocation.stop_at_skill)
            ended = jail.run(
                invocation.prompt.encode("utf-8"), invocation.timeout, reader.feed, MAX_STREAM_BYTES
            )
            copied = None
            if invocation.workspace is not None:
                copied = jail.collect(invocation.workspace, COPY_CAPS)
        return Launched(reader, ended, copied)

    def _seed(self, jail: JailedCommand, invocation: Invocation) -> None:
        login = login_file(self.lookup)
        if login is not None:  # a subscription login: the only credential that must go in
            jail.put(f"{jail.home}/.claude/.credentials.json", login)
        if invocation.system_prompt is not None:
            jail.put(f"{jail.home}/{SYSTEM_FILE}", invocation.system_prompt.encode("utf-8"))
        if invocation.workspace is not None:
            jail.seed(invocation.workspace)


__all__ = ["Invocation", "JailBroken", "Launched", "Launcher"]
