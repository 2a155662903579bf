"""One Claude Code run, the one way every attempt, judgement and text reply runs the CLI:
`claude -p --output-format stream-json` in a jail of its own (jail/session.py), its stream
read as it arrives (stream.py), its workspace seeded and copied back.

    launcher = Launcher(config)                      # one per executor, grader or text model
    done = launcher.run(Invocation(args, prompt, timeout, workspace=ws, stop_at_skill="pdf"))
    done.reader.result(done.ended.code, done.ended.stderr)

No Python process per run: the harness starts the jail (bubblewrap, a few-millisecond holder,
the CLI) and reads the stream in the calling thread. With jail "none" (--no-jail) the same
steps run the CLI unconfined in host temporary folders. The steps every jailed agent CLI
shares (OpenCode and Codex too) are agent_launch.py's; this module says what Claude Code
needs of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...errors import ExecutorError
from ...jail import JailKind, Mount
from ...jail.agent_image import IMAGE_PATH
from ...jail.api_proxy import ApiLog, ApiProxy
from ...jail.confine import landlock
from ...jail.copyout import Copied
from ...jail.providers import image_programs, isolated, require
from ...jail.session import RUN_DIR, Ended, JailBroken, JailedCommand
from ..agent_launch import AGENT_LIMITS, COPY_CAPS, AgentRun, ProxySlot, Start, launch
from ..agent_spending import AgentSpending
from ..base import env_lookup
from ..reachability import probe
from .binary import program_dir
from .config import ClaudeCliConfig
from .dialect import MESSAGES
from .environment import api_credentials, child_env, cloud_provider, login_file, upstream
from .stream import StreamReader

SYSTEM_FILE = ".skill-eval-system-prompt.md"  # in the child's HOME
IMAGE_CLI = "claude"  # the command an agent image holds (npm install -g @anthropic-ai/claude-code)


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
    workspace (None without one), and what the API proxy saw of it (None: no jail)."""

    reader: StreamReader
    ended: Ended
    copied: Copied | None
    api: ApiLog | None = None


class Launcher:
    """Runs the CLI for one executor (or grader, or text model); thread-safe. `binary`: the
    host's CLI (binary.resolve), None when there is none; a jail that runs its image's own
    programs (Docker Desktop's agent image) needs none and runs the image's `claude`.
    `spending`: the executor's, whose hooks its jail's forward calls (None: nothing is
    metered there)."""

    def __init__(
        self, config: ClaudeCliConfig, binary: str | None, spending: AgentSpending | None = None
    ) -> None:
        self.config, self.binary, self.spending = config, binary, spending
        self.lookup = env_lookup(config.env)
        self.jail: JailKind = config.jail
        self._proxy = ProxySlot(self._make_proxy)

    def in_image(self) -> bool:
        """Whether runs start the jail image's own CLI rather than the host's."""
        return image_programs(self.jail)

    def program(self) -> str | None:
        """What a run starts: the image's `claude` (found on IMAGE_PATH inside), else the
        host's binary (shown read-only), None when neither is there."""
        return IMAGE_CLI if self.in_image() else self.binary

    def check(self) -> None:
        """Raise ExecutorError when no run can work here (no jail, another cloud's API,
        nothing listening at the base URL given)."""
        given = self.config.base_url or self.lookup("ANTHROPIC_BASE_URL")
        if given and (nobody := probe(given)) is not None:
            raise ExecutorError(nobody)
        if not isolated(self.jail):
            return
        require(self.jail)
        if (cloud := cloud_provider(self.lookup, self.config.env)) is not None:
            raise ExecutorError(
                f"{cloud} is set: the jail reaches only the Anthropic API through skill-eval's "
                "forward; run with --no-jail to use another cloud's API"
            )

    def _make_proxy(self) -> ApiProxy:
        headers, _ = api_credentials(self.lookup)
        url, spending = upstream(self.lookup, self.config.base_url), self.spending
        if spending is None:
            return ApiProxy(url, headers, MESSAGES)
        return ApiProxy(url, headers, MESSAGES, admit=spending.admit, on_usage=spending.heard)

    def proxy(self) -> ApiProxy:
        return self._proxy.get()

    def unreachable(self) -> str | None:
        """`nothing listens at URL` when the jail's forward found no one at the upstream
        before any reply (see ProxySlot.unreachable); None otherwise and without a jail."""
        return self._proxy.unreachable() if isolated(self.jail) else None

    def run(self, invocation: Invocation) -> Launched:
        program = self.program()
        if program is None:
            raise OSError("no claude CLI to run")
        in_image = self.in_image()
        # the host's CLI is shown read-only at its own path; the image's is there already
        mounts = [] if in_image else [Mount("ro", str(program_dir(program)), program_dir(program))]
        jailed = isolated(self.jail)
        proxy = self.proxy() if jailed else None
        log = ApiLog() if jailed else None
        reader = StreamReader(stop_at_skill=invocation.stop_at_skill)

        def prepare(jail: JailedCommand) -> Start:
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
                env["SKILL_EVAL_PYTHON"] = jail.python  # the shell prefix's interpreter
            if in_image:  # the host's PATH names the host's folders (macOS's, say)
                env["PATH"] = IMAGE_PATH
            if invocation.claude_md:
                env.pop("CLAUDE_CODE_DISABLE_CLAUDE_MDS", None)
            argv = [program, "-p", "--output-format", "stream-json", "--verbose"]
            argv += invocation.args
            files = {}
            login = login_file(self.lookup)
            if login is not None:  # a subscription login: the only credential that must go in
                files[f"{jail.home}/.claude/.credentials.json"] = login
            if invocation.system_prompt is not None:
                argv += [invocation.system_flag, f"{jail.home}/{SYSTEM_FILE}"]
                files[f"{jail.home}/{SYSTEM_FILE}"] = invocation.system_prompt.encode("utf-8")
            return Start(argv, env, files)

        # (agent_shell.sh and confine.py are in the jail's own RUN_DIR, read-only)
        done = launch(
            AgentRun(
                self.jail,
                mounts,
                prepare,
                reader.feed,
                invocation.timeout,
                workspace=invocation.workspace,
                proxy=proxy,
                # the CLI itself in a Landlock domain from its first instruction (holder.py)
                confine=jailed and landlock(),
                stdin=invocation.prompt.encode("utf-8"),
                api_log=log,
            )
        )
        return Launched(reader, done.ended, done.copied, log)


__all__ = ["AGENT_LIMITS", "COPY_CAPS", "Invocation", "JailBroken", "Launched", "Launcher"]
