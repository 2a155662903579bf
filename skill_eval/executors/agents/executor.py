"""What the `opencode` and `codex` executors share: one agent CLI run per attempt, in a jail of
its own (agent_launch.py, as Claude Code's), the skill delivered by mode (delivery.py), the
CLI's events read into the attempt (its reader), the result classed.

What the jail holds: the attempt's workspace and HOME (size-capped tmpfs; HOME holds the XDG
folders and CODEX_HOME, empty but for what the run writes there), the system's folders and the
CLI's binary read-only, no network but the model API forwarded by the harness's proxy, which
swaps the placeholder key for the real one. The CLI itself runs in a Landlock domain of its
own: TCP only to that forward, and neither it nor its commands can signal or trace the jail's
holder. Nothing above the workspace (/workspace, under the jail's empty root) holds a skill
or an AGENTS.md, and HOME starts empty, so the user's skills, config, context files and
credentials never load.
"""

from __future__ import annotations

import ctypes
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from ...core.bounded import MAX_STREAM_BYTES, mib
from ...core.budget import Budget
from ...core.execution import SkillMode
from ...core.failure import Failure
from ...core.model import ExecutionRequest, ExecutionResult
from ...errors import ExecutorError
from ...jail import JailKind, Mount
from ...jail.api_proxy import FORWARD_PORT, ApiLog, ApiProxy
from ...jail.confine import abi
from ...jail.providers import image_programs, isolated, name_of, require
from ...jail.session import JailBroken, JailedCommand
from ...jail.wire import ApiDialect
from ..agent_launch import AgentRun, CliRuns, ProxySlot, Start, image_cli_version, launch
from ..agent_spending import AgentSpending, stopped_attempt
from ..base import ExecutorBase, env_lookup
from ..catalog import skill_invocations
from ..claude import binary as claude_binary
from ..openai_http import DEFAULT_BASE_URL
from ..pricing import load_price_table
from ..reachability import probe
from ..tool_check import checked, tampered
from . import binaries
from .config import AgentCliConfig
from .delivery import (
    CONTEXT_FILE,
    Delivered,
    clear,
    deliver,
    delivery_problem,
    host_problem,
    planted,
)
from .events import EventReader

INSIDE_KEY = "SKILL_EVAL_API_KEY"  # the variable the CLI's key is in (inside: the placeholder)
PASS_VARS = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")


def landlock() -> bool:
    return abi(ctypes.CDLL(None, use_errno=True)) > 0


class AgentCliExecutor(CliRuns, ExecutorBase):
    """One jailed agent CLI run per attempt; a subclass says which CLI and how to run it
    (`cli`, `package`, `dialect`, `mounts`, `start`, `reader`, `tools_record`). Thread-safe."""

    uses_workspace = True
    can_act = True  # the agent's tools act in the attempt's workspace
    can_trigger = True  # an installed skill, and a stop at its invocation
    cli = "agent"  # its binary's name
    package = ""  # what installs it (`npm-package@version`), named when it is missing
    # The wire format the jail's API forward speaks for it (jail/wire.py): its routes,
    # request allow-list, headers and how its replies read.
    dialect: ClassVar[ApiDialect]
    skills_dir = ".agents/skills"  # where, in the workspace, it finds a project's skills
    context_file = CONTEXT_FILE  # both read AGENTS.md (context mode: delivery.py)

    def __init__(self, config: AgentCliConfig, binary_option: str | None) -> None:
        self.config = config
        self._env = env_lookup(config.env)
        self.model = config.model or self._env("SKILL_EVAL_MODEL")
        self.prices = load_price_table(Path(config.price_file) if config.price_file else None)
        # each reply the jail's forward relays, priced and charged; requests refused when spent
        self.spending = AgentSpending(self.prices, self.model)
        self._given = binary_option
        self.binary = binaries.find_cli(self.cli, binary_option)
        self.program = binaries.native(self.binary) if self.binary else None
        self.jail: JailKind = config.jail
        self.confined = isolated(self.jail) and landlock()
        self.base_url = config.resolved_base_url()
        self._proxy = ProxySlot(
            lambda: ApiProxy(
                self.base_url,
                self.dialect.credentials(config.api_key()),
                self.dialect,
                admit=self.spending.admit,
                on_usage=self.spending.heard,
            )
        )
        CliRuns.__init__(self)

    # -- what a subclass says ----------------------------------------------------------------

    def mounts(self) -> list[Mount]:
        """Read-only host paths the CLI needs in the jail (its binary's folder, tools); none
        when the jail runs its image's own CLI."""
        if self.in_image() or self.program is None:
            return []
        folder = binaries.program_dir(self.program)
        return [Mount("ro", str(folder), folder)]

    def start(self, jail: JailedCommand, request: ExecutionRequest, delivery: Delivered) -> Start:
        raise NotImplementedError

    def reader(self, stop_at_skill: str | None) -> EventReader:
        """The event reader of one attempt (its `result`, and its `tampering` rule)."""
        raise NotImplementedError

    def tools_record(self, request: ExecutionRequest) -> dict[str, Any]:
        """What the attempt's record says about its tools."""
        raise NotImplementedError

    def check_request(self, request: ExecutionRequest) -> str | None:
        """Why no attempt of this task can run (the same for every attempt), or None."""
        return None

    def request_meta(self, request: ExecutionRequest) -> dict[str, Any]:
        """What the attempt's record must say about this request beyond the run (e.g. a
        prompt that loads the skill by itself)."""
        return {}

    # -- shared ------------------------------------------------------------------------------

    def in_image(self) -> bool:
        """Whether attempts start the jail image's own CLI (Docker Desktop's agent image),
        not the host's: the host may have none, or one Linux cannot run."""
        return image_programs(self.jail)

    def command(self) -> str | None:
        """What an attempt starts: the image's CLI by its name (on the image's PATH), else
        the host's program (shown read-only), None when neither is there."""
        return self.cli if self.in_image() else self.program

    def use_budget(self, budget: Budget | None) -> None:
        self.budget = self.spending.budget = budget

    def api(self) -> tuple[str, str]:
        """(base URL, key) as the CLI sees them: the jail's forward and the placeholder, or
        (--no-jail) the API itself and the real key (a placeholder when none is needed)."""
        if not isolated(self.jail):
            return self.base_url, self.config.api_key() or "no-key"
        # Inside, the forward's routes follow what the dialect strips (`/v1` for OpenAI's)
        return f"http://127.0.0.1:{FORWARD_PORT}{self.dialect.strip}", self._proxy.get().placeholder

    def base_env(self, home: str, path: str = "/usr/local/bin:/usr/bin:/bin") -> dict[str, str]:
        """HOME and the XDG folders in the attempt's HOME, a PATH, the locale; no key."""
        env = {k: v for k in PASS_VARS if (v := self._env(k))}
        env.update(
            PATH=path,
            HOME=home,
            XDG_CONFIG_HOME=f"{home}/.config",
            XDG_DATA_HOME=f"{home}/.local/share",
            XDG_CACHE_HOME=f"{home}/.cache",
            XDG_STATE_HOME=f"{home}/.local/state",
            TMPDIR="/tmp" if isolated(self.jail) else f"{home}/.tmp",
            TERM="dumb",
        )
        env.setdefault("LANG", "C.UTF-8")
        return env

    def preflight(self) -> None:
        if self.command() is None:
            raise ExecutorError(binaries.not_found(self.cli, self.package, self._given))
        if isolated(self.jail):
            require(self.jail)
        if not self.model:
            raise ExecutorError(
                f"the {self.cli} executor needs a model: --model NAME (the name the API at "
                f"{self.base_url} serves, e.g. gpt-5.5)"
            )
        if (problem := self.config.key_problem(self.cli)) is not None:
            raise ExecutorError(problem)
        if not isolated(self.jail) and (problem := host_problem(Path(tempfile.gettempdir()))):
            raise ExecutorError(problem)
        if self.base_url != DEFAULT_BASE_URL and (nobody := probe(self.base_url)) is not None:
            raise ExecutorError(nobody)

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        if self._cancelled.is_set():
            return ExecutionResult(failure=Failure("cancelled"))
        if self.command() is None:
            return ExecutionResult(
                failure=Failure.setup(binaries.not_found(self.cli, self.package, self._given))
            )
        watch = request.settings.stop_on_skill  # a trigger task: did the agent invoke it?
        problem = self.check_request(request)
        if watch and request.skill is None:
            problem = f"trigger task {request.task.id!r} needs a skill in every arm"
        mode: SkillMode = request.settings.mode(self.config.skill_mode)
        workspace = Path(request.workspace) if request.workspace is not None else None
        skill = request.skill
        if problem is None:  # the task's own files in the way: every attempt would fail alike
            problem = delivery_problem(skill, mode, workspace, self.skills_dir)
        if problem is not None:
            return ExecutionResult(failure=Failure.setup(problem))
        started = time.monotonic()
        try:
            delivery = deliver(skill, request.task.prompt, mode, workspace, self.skills_dir)
            result = self._attempt(request, delivery, watch, workspace)
        except (OSError, JailBroken) as exc:
            result = ExecutionResult(failure=Failure.transient(f"cannot run {self.cli}: {exc}"))
        finally:  # the delivered skill is ours, not the agent's work
            clear(workspace, planted(skill, mode, self.skills_dir))
        if self._cancelled.is_set():  # whatever failed after cancel() failed because of it
            result = ExecutionResult(failure=Failure("cancelled"))
        if watch and result.failure is not None and result.failure.ends_as == "failed":
            # says nothing about triggering: an error, not the output's failure
            result = replace(result, failure=replace(result.failure, ends_as="error"))
        meta = {
            **result.meta,
            **self.request_meta(request),
            "latency_ms": int((time.monotonic() - started) * 1000),
            "isolation": self.isolation(request, mode),
        }
        if request.skill is not None and result.transcript:
            found = skill_invocations(result.transcript, request.skill.name)
            meta["skill_invocations"] = len(found)
        return replace(result, meta=meta)

    def _attempt(
        self, request: ExecutionRequest, delivery: Delivered, watch: bool, workspace: Path | None
    ) -> ExecutionResult:
        log = ApiLog()
        reader = self.reader(request.skill.name if watch and request.skill else None)
        done = launch(
            AgentRun(
                self.jail,
                self.mounts(),
                lambda jail: self.start(jail, request, delivery),
                reader.feed,
                request.timeout_seconds,
                workspace=workspace,
                proxy=self._proxy.get() if isolated(self.jail) else None,
                confine=self.confined,
                stdin=delivery.prompt.encode("utf-8"),
                api_log=log,
            )
        )
        ended = done.ended
        api_meta = {
            "api_requests": log.requests,
            **({"api_errors": s} if (s := log.summary()) else {}),
            **log.record(),
        }
        jailed = isolated(self.jail)
        if jailed and (problem := checked(reader, log)):
            return self.spending.settle(tampered(problem, log), log)
        if ended.timed_out:
            result = self._timed_out(request.timeout_seconds, log, reader)
        elif ended.overflow:
            result = ExecutionResult(
                failure=Failure.output(
                    f"{self.cli} wrote more than {mib(MAX_STREAM_BYTES)} of events in one "
                    "attempt; it was stopped and the attempt counts as a failure"
                ),
                meta={"error_type": "stream_over_cap"},
            )
        else:
            result = self._priced(reader.result(ended.code, ended.stderr, log))
        if done.copied is not None and done.copied.over is not None and result.failure is None:
            over = done.copied.over
            result = replace(
                result,
                failure=Failure.output(f"the attempt's workspace could not be read back: {over}"),
            )
        if (nobody := self._proxy.unreachable()) is not None:  # no attempt could reach it
            result = ExecutionResult(failure=Failure.setup(nobody), meta={"error_type": "refused"})
        elif jailed:  # what its replies cost, as the forward saw them
            result = self.spending.settle(result, log)
            why = self.spending.stopped(log)
            result = result if why is None else stopped_attempt(why, result)
        return replace(result, meta={**result.meta, **api_meta})

    def _timed_out(self, timeout: float, log: ApiLog, reader: EventReader) -> ExecutionResult:
        """Out of time: the API's error when it was failing at the end (retried, never the
        output's fault), else the agent's (retried, then a failure)."""
        more: dict[str, Any] = {"transcript": reader.transcript(), "usage": reader.usage}
        if log.failing():
            return ExecutionResult(
                failure=Failure.transient(
                    f"{self.cli} timed out after {timeout:g}s while the API was failing "
                    f"(its last reply: HTTP {log.last_error() or 'unreachable'})"
                ),
                meta={"error_type": "api_failing"},
                **more,
            )
        return ExecutionResult(
            failure=Failure.output(
                f"{self.cli} timed out after {timeout:g}s (its jail killed)", retry=True
            ),
            meta={"error_type": "timeout"},
            **more,
        )

    def _priced(self, result: ExecutionResult) -> ExecutionResult:
        """The attempt's cost from the price table when the agent reported none."""
        if (
            result.cost_usd
            or not self.model
            or not (result.usage.input_tokens or result.usage.output_tokens)
        ):
            return result
        cost, note = self.prices.cost(self.model, result.usage)
        meta = {**result.meta, "price_note": note} if note else result.meta
        return replace(result, cost_usd=cost, meta=meta)

    def isolation(self, request: ExecutionRequest | None, mode: SkillMode) -> dict[str, Any]:
        record = {
            "jail": name_of(self.config.jail),
            "cli_landlock": self.confined,
            "home": "temporary per attempt (empty: no user config, skills or credentials)",
            "working_directory": "a copy of the attempt's workspace",
            "skill_mode": mode,
        }
        return {**record, **(self.tools_record(request) if request is not None else {})}

    def ask_version(self) -> str | None:
        if self.in_image():  # the image's CLI: the version its label records
            return image_cli_version(self.jail, self.package)
        if self.program is None:
            return None
        cache = Path(self.config.version_cache) if self.config.version_cache else None
        return claude_binary.version(
            self.program, cache, {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        )
