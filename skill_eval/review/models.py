"""The role-model seam: how a review stage asks a model for one reply.

`RoleModel.complete(role, system, prompt) -> TextReply` is a one-method protocol. The model
service is an executor (`review --executor NAME`), resolved through the executor registry
like a grader: any executor with a text model (`anthropic`, `claude-cli`, a plugin that offers
one) serves the roles through `ExecutorRoleModel`, which picks each role's model. `mock` is
the built-in test double instead: replies per role from a YAML file (`MockRoleModel`), or
without one, replies scripted from the goal (`scripted.ScriptedRoleModel`), offline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import yaml

from ..core.model import Usage
from ..engine.spend import Meter, tokens_of
from ..errors import BudgetExhausted, UsageError
from ..executors.base import DEFAULT_MODEL, OFFLINE_EXECUTOR, create_text_model, env_lookup
from ..executors.pricing import PriceTable, load_price_table
from ..executors.text_model import (
    DEFAULT_MAX_TOKENS,
    TextModel,
    TextModelError,
    TextModelSettings,
    TextReply,
    TextRequest,
)
from .goal import ROLES, Goal
from .scripted import ScriptedRoleModel, with_answer_tags

# The built-in test double (scripted replies), not a registered executor's text model: named
# as the offline executor is, so that `--mock` means one name for everything offline.
MOCK = OFFLINE_EXECUTOR


class RoleModel(Protocol):
    def complete(self, role: str, system: str, prompt: str) -> TextReply: ...


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

    def complete(self, role: str, system: str, prompt: str) -> TextReply:
        self.calls.append((role, system, prompt))
        queue = self._replies.get(role) or []
        if not queue:
            raise TextModelError(f"mock replies: no reply left for the {role}")
        return TextReply(with_answer_tags(queue.pop(0), prompt), Usage(), MOCK)


class ExecutorRoleModel:
    """The roles through an executor's text model: each role's model from `--models`, else
    SKILL_EVAL_MODEL, else the default model."""

    def __init__(
        self,
        text_model: TextModel,
        models: Mapping[str, str] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        self.text_model = text_model
        self.models = dict(models or {})
        self.max_tokens = max_tokens
        self._env = env_lookup(env)

    def complete(self, role: str, system: str, prompt: str) -> TextReply:
        model = self.models.get(role) or self._env("SKILL_EVAL_MODEL") or DEFAULT_MODEL
        return self.text_model.complete(
            TextRequest(system, prompt, model, self.max_tokens, label=role)
        )


class MeteredRoleModel:
    """A role model whose every reply is priced and counted on the review's meter
    (--max-cost-usd, --max-tokens-total): the roles spend the same budget as the QA runs."""

    def __init__(self, inner: RoleModel, meter: Meter, prices: PriceTable | None = None) -> None:
        self.inner = inner
        self.meter = meter
        self.prices = prices or load_price_table()

    def complete(self, role: str, system: str, prompt: str) -> TextReply:
        if self.meter.reached is not None:
            raise BudgetExhausted(f"budget exhausted, review stopped: {self.meter.reached}")
        reply = self.inner.complete(role, system, prompt)
        cost, _ = self.prices.cost(reply.model, reply.usage)
        self.meter.charge(cost, tokens_of(reply.usage))
        return reply


def build_role_model(
    executor: str,
    *,
    models: Mapping[str, str] | None = None,
    mock_replies: str | None = None,
    claude_bin: str | None = None,
    base_url: str | None = None,
    env: Mapping[str, str] | None = None,
    goal: Goal | None = None,
    options: Mapping[str, object] | None = None,
    meter: Meter | None = None,
) -> RoleModel:
    """The role model of `review --executor NAME`. `mock` replays `mock_replies` (UsageError
    for a missing file), or without a file scripts replies from `goal`; any other name is the
    text model of that executor, its config from `claude_bin`, `base_url`, `env` and any
    other `options` (those its config has; ExecutorError when it has no text model, listing
    those that do). With a `meter` (the review's caps) every reply is counted on it."""
    model = _role_model(executor, models, mock_replies, claude_bin, base_url, env, goal, options)
    return model if meter is None else MeteredRoleModel(model, meter)


def _role_model(
    executor: str,
    models: Mapping[str, str] | None,
    mock_replies: str | None,
    claude_bin: str | None,
    base_url: str | None,
    env: Mapping[str, str] | None,
    goal: Goal | None,
    options: Mapping[str, object] | None,
) -> RoleModel:
    if executor == MOCK:
        if mock_replies:
            return MockRoleModel.from_file(mock_replies)
        if goal is None:
            raise UsageError("--executor mock needs --mock-replies FILE")
        return ScriptedRoleModel(goal)
    own = {
        **(options or {}),
        "claude_bin": claude_bin,
        "base_url": base_url,
        "env": dict(env) if env is not None else None,
    }
    text_model = create_text_model(executor, own, TextModelSettings())
    return ExecutorRoleModel(text_model, models, env=env)
