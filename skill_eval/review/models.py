"""The role-model seam: how a review stage asks a model for one reply.

`RoleModel.complete(role, system, prompt) -> RoleReply` is a one-method protocol with three
backends: `anthropic` (the SDK client the anthropic grader builds: one copy of the key, base
URL, timeout and retry plumbing), `claude-cli` (`claude -p` isolated exactly as a judgement is,
through claude_process) and `mock` (scripted replies per role from a YAML file, for CI).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import yaml

from ..core.model import Usage
from ..errors import ExecutorError, UsageError
from ..executors.base import DEFAULT_MODEL, env_lookup

if TYPE_CHECKING:
    from .goal import Goal

ROLES = ("orchestrator", "builder", "visionary")
BACKENDS = ("anthropic", "claude-cli", "mock")
DEFAULT_MAX_TOKENS = 16_000  # a builder reply holds a whole suite
DEFAULT_TIMEOUT = 600.0


class RoleModelError(ExecutorError):
    """A role model that cannot answer (no key, no CLI, an API failure, no scripted reply)."""


@dataclass(frozen=True)
class RoleReply:
    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""


class RoleModel(Protocol):
    def complete(self, role: str, system: str, prompt: str) -> RoleReply: ...


def parse_models(spec: str | None) -> dict[str, str]:
    """`orchestrator=claude-opus-4-6,builder=...` -> {role: model}; UsageError on a bad item."""
    models: dict[str, str] = {}
    for item in (spec or "").split(","):
        if not item.strip():
            continue
        role, sep, model = item.partition("=")
        role, model = role.strip(), model.strip()
        if not sep or not model:
            raise UsageError(f"--models: {item.strip()!r} must be ROLE=MODEL")
        if role not in ROLES:
            raise UsageError(f"--models: unknown role {role!r}; roles are {', '.join(ROLES)}")
        models[role] = model
    return models


def with_answer_tags(reply: str, prompt: str) -> str:
    """A scripted reply with its `<decision>` and `</decision>` placeholders turned into the
    tags the prompt asks for (`<decision-NONCE>`, the nonce of that call), as a model that
    follows the instructions would write them. A prompt naming no such tag leaves it as it is."""
    asked = re.findall(r"<(decision-[0-9a-f]+)>", prompt)
    if not asked:
        return reply
    tag = asked[-1]  # the instruction ends the prompt; anything earlier is quoted material
    return reply.replace("<decision>", f"<{tag}>").replace("</decision>", f"</{tag}>")


class MockRoleModel:
    """Replays scripted replies: `{role: [reply, ...]}`, each consumed in order, with the
    `<decision>` placeholder tags given this call's nonce (`with_answer_tags`). Running out
    is an error (a script that is too short is a broken test, not a reply). Keeps every
    call."""

    def __init__(self, replies: Mapping[str, Sequence[str]]) -> None:
        self._replies = {role: list(texts) for role, texts in replies.items()}
        self.calls: list[tuple[str, str, str]] = []

    @classmethod
    def from_file(cls, path: str | Path) -> MockRoleModel:
        shown = str(path)
        try:
            data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UsageError(f"{shown}: mock replies file not found") from None
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise UsageError(f"{shown}: cannot read mock replies: {exc}".splitlines()[0]) from None
        if not isinstance(data, Mapping):
            raise UsageError(f"{shown}: must map each role to a list of replies")
        for role, texts in data.items():
            if role not in ROLES:
                raise UsageError(f"{shown}: {role}: unknown role; roles are {', '.join(ROLES)}")
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                raise UsageError(f"{shown}: {role}: must be a list of reply strings")
        return cls(data)

    def complete(self, role: str, system: str, prompt: str) -> RoleReply:
        self.calls.append((role, system, prompt))
        queue = self._replies.get(role) or []
        if not queue:
            raise RoleModelError(f"mock replies: no reply left for the {role}")
        return RoleReply(with_answer_tags(queue.pop(0), prompt), Usage(), "mock")


class AnthropicRoleModel:
    """One Messages API call per stage, with the client of AnthropicGrader (the SDK's own
    retries on: a stage is not retried by a runner)."""

    def __init__(
        self,
        models: Mapping[str, str],
        *,
        base_url: str | None = None,
        env: Mapping[str, str] | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        from ..executors.anthropic_api import AnthropicConfig
        from ..executors.anthropic_grader import AnthropicGrader
        from ..executors.grader import GraderSettings

        self.models = dict(models)
        self.max_tokens = max_tokens
        self._env = env_lookup(env)
        self._grader = AnthropicGrader(
            AnthropicConfig(base_url=base_url, env=env), GraderSettings(timeout=timeout)
        )

    def complete(self, role: str, system: str, prompt: str) -> RoleReply:
        model = self.models.get(role) or self._env("SKILL_EVAL_MODEL") or DEFAULT_MODEL
        if not self._env("ANTHROPIC_API_KEY"):
            raise RoleModelError("ANTHROPIC_API_KEY is not set (needed by --backend anthropic)")
        import anthropic  # lazily: the SDK is slow to import

        client = self._grader._get_client()  # the one copy of the client set-up
        try:
            message = client.messages.create(
                model=model,
                max_tokens=self.max_tokens,
                system=system,
                messages=[{"role": "user", "content": prompt}],
            )
        except anthropic.AnthropicError as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
            raise RoleModelError(f"{role}: model call failed: {first}") from None
        text = "".join(
            getattr(b, "text", "") or ""
            for b in message.content or []
            if getattr(b, "type", None) == "text"
        )
        return RoleReply(
            text,
            _usage(getattr(message, "usage", None)),
            str(getattr(message, "model", "") or model),
        )


class ClaudeCliRoleModel:
    """One `claude -p` reply per stage, isolated as a judgement is (claude_grader.cli_command:
    our system prompt, no tools, no settings; a throw-away HOME)."""

    def __init__(
        self,
        models: Mapping[str, str],
        *,
        claude_bin: str | None = None,
        base_url: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.models = dict(models)
        self.claude_bin = claude_bin
        self.base_url = base_url
        self.env = env
        self.timeout = timeout
        self._env = env_lookup(env)

    def complete(self, role: str, system: str, prompt: str) -> RoleReply:
        from ..executors.claude_grader import cli_command
        from ..executors.claude_process import (
            copy_credentials,
            find_claude,
            isolated_env,
            kill_group,
            not_found_message,
            parse_envelope,
        )

        model = self.models.get(role) or self._env("SKILL_EVAL_MODEL") or DEFAULT_MODEL
        binary = find_claude(self.claude_bin)
        if not binary:
            raise RoleModelError(not_found_message(self.claude_bin))
        home = Path(tempfile.mkdtemp(prefix="skill-eval-review-"))  # may hold credentials
        try:
            (home / ".claude").mkdir()
            copy_credentials(self._env, home / ".claude")
            env = isolated_env(
                home, self._env, max_retries="2", base_url=self.base_url, extra=self.env
            )
            proc = subprocess.Popen(
                cli_command(binary, system, model),
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
                stdout, stderr = proc.communicate(prompt, timeout=self.timeout)
            except subprocess.TimeoutExpired:
                kill_group(proc)
                proc.communicate()
                raise RoleModelError(
                    f"{role}: claude CLI timed out after {self.timeout:g}s"
                ) from None
            finally:
                kill_group(proc)
        finally:
            shutil.rmtree(home, ignore_errors=True)
        result = parse_envelope(stdout, stderr, proc.returncode)
        if result.error is not None:
            raise RoleModelError(
                f"{role}: claude CLI failed (exit {proc.returncode}): "
                f"{result.error.splitlines()[0][:300] if result.error else ''}"
            )
        return RoleReply(result.output, result.usage, model)


def build_role_model(
    backend: str,
    *,
    models: Mapping[str, str] | None = None,
    mock_replies: str | None = None,
    claude_bin: str | None = None,
    base_url: str | None = None,
    env: Mapping[str, str] | None = None,
    goal: Goal | None = None,
) -> RoleModel:
    """The role model of `--backend`; UsageError for an unknown backend or a missing file.
    `mock` replays `mock_replies`, or without a file scripts replies from `goal`."""
    if backend == "mock":
        if mock_replies:
            return MockRoleModel.from_file(mock_replies)
        if goal is None:
            raise UsageError("--backend mock needs --mock-replies FILE")
        from .scripted import ScriptedRoleModel  # imports this module

        return ScriptedRoleModel(goal)
    if backend == "anthropic":
        return AnthropicRoleModel(models or {}, base_url=base_url, env=env)
    if backend == "claude-cli":
        return ClaudeCliRoleModel(models or {}, claude_bin=claude_bin, base_url=base_url, env=env)
    raise UsageError(f"--backend must be one of {', '.join(BACKENDS)}, got {backend!r}")


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    return Usage(**{k: int(getattr(raw, k, 0) or 0) for k in Usage().to_dict()})
