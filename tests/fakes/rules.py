"""Reply rules for the fake model servers: which request gets which scripted reply.

A rule is a flat mapping of match conditions (all must hold) and reply actions; rules are tried
in order and the first that matches answers. Rules read a request as a protocol-neutral
`Conversation`, so one rule file scripts the Messages, Chat Completions and Responses fakes
alike. See tests/fakes/README.md for the file format.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fakes.conversation import Conversation
from tests.fakes.faults import FAULT_KINDS, normalise_kind
from tests.fakes.templates import substitute

MATCH_KEYS = (
    "path",
    "model",
    "stream",
    "system_contains",
    "system_not_contains",
    "messages_contain",
    "messages_not_contain",
    "last_message_contains",
    "request_contains",
    "request_not_contains",
    "has_tools",
    "tool_choice_name",
    "turn",
    "tool_result",
)
# What one reply (a rule's, or one of its `steps`) may say.
STEP_KEYS = ("text", "tool_use", "tool_input", "stop_reason", "latency", "fault", "usage")
REPLY_KEYS = (*STEP_KEYS, "steps", "times")
TOOL_RESULT_KEYS = ("name", "contains", "is_error")


def _as_list(value: str | Iterable[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


def _tool_uses(value: Any) -> list[dict[str, Any]]:
    """`tool_use` as a list of blocks: it may be one mapping or a list of them."""
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _tool_result_holds(wanted: bool | str | Mapping[str, Any], convo: Conversation) -> bool:
    """Whether the newest turn's tool results satisfy a `tool_result` condition."""
    results = convo.tool_results
    if isinstance(wanted, bool):
        return bool(results) == wanted
    if isinstance(wanted, str):
        wanted = {"name": wanted}
    for result in results:
        if "name" in wanted and result.name != wanted["name"]:
            continue
        if "is_error" in wanted and result.is_error != bool(wanted["is_error"]):
            continue
        if any(needle not in result.content for needle in _as_list(wanted.get("contains"))):
            continue
        return True
    return False


@dataclass
class Rule:
    """One scripted reply and the conditions under which it is given.

    Match conditions (all given ones must hold; a list of strings means every one must occur):
    `path` (glob, default any), `model` (glob), `stream` (bool), `system_contains`,
    `system_not_contains`, `messages_contain` (text of any message, tool results included),
    `messages_not_contain`, `last_message_contains` (the last user message),
    `request_contains` / `request_not_contains` (system, tool definitions and messages),
    `has_tools` (bool), `tool_choice_name`, `turn` (1 + the assistant messages in the request),
    `tool_result` (the newest user message holds tool results: `true`/`false`, a tool name, or
    `{name, contains, is_error}`).

    Reply actions: `text`, `tool_use` (`{"name": ..., "input": {...}}` or a list of them; ids
    are generated), `tool_input` (a tool_use of the forced tool from `tool_choice`, else of
    the first tool offered), `stop_reason` (default `end_turn`, or `tool_use` when a tool is
    called), `latency` (seconds, replaces the server's global latency), `fault` (answer with a
    fault kind instead), `usage` (overrides of the computed usage fields), `steps` (a list of
    replies: turn N gets the N-th; past the last the rule does not match), `times` (answer at
    most this many times, then let later rules match). Strings in `text` and tool inputs may
    use `{cwd}`, `{model}` and `{tool_result}` (see templates.substitute).
    """

    name: str = ""
    path: str | None = None
    model: str | None = None
    stream: bool | None = None
    system_contains: str | list[str] | None = None
    system_not_contains: str | list[str] | None = None
    messages_contain: str | list[str] | None = None
    messages_not_contain: str | list[str] | None = None
    last_message_contains: str | list[str] | None = None
    request_contains: str | list[str] | None = None
    request_not_contains: str | list[str] | None = None
    has_tools: bool | None = None
    tool_choice_name: str | None = None
    turn: int | None = None
    tool_result: bool | str | dict[str, Any] | None = None
    text: str | None = None
    tool_use: dict[str, Any] | list[dict[str, Any]] | None = None
    tool_input: dict[str, Any] | None = None
    stop_reason: str | None = None
    latency: float | None = None
    fault: str | None = None
    usage: dict[str, int] | None = None
    steps: list[Any] | None = None
    times: int | None = None
    _used: int = field(default=0, init=False, repr=False, compare=False)
    _lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], index: int = 0) -> Rule:
        """Build a rule from a mapping (a rules file entry); unknown keys are an error.

        Conditions and actions may be flat, or nested under `match:` and `reply:`.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"rules[{index}]: must be a mapping, got {type(data).__name__}")
        flat: dict[str, Any] = {}
        for key, value in data.items():
            if key in ("match", "reply") and isinstance(value, Mapping):
                flat.update(value)
            else:
                flat[key] = value
        valid = {"name", *MATCH_KEYS, *REPLY_KEYS}
        unknown = sorted(set(flat) - valid)
        if unknown:
            raise ValueError(
                f"rules[{index}]: unknown key(s) {', '.join(unknown)}; "
                f"valid keys: {', '.join(sorted(valid))}"
            )
        rule = cls(**flat)
        rule.validate(index)
        return rule

    def validate(self, index: int = 0) -> None:
        """Raise ValueError when the rule's conditions or actions are inconsistent; turns
        `steps` entries (mappings of reply keys, or bare texts) into Rule objects."""
        where = f"rules[{index}] ({self.name})" if self.name else f"rules[{index}]"
        self._validate_reply(where)
        if self.times is not None and self.times < 1:
            raise ValueError(f"{where}: times must be >= 1")
        if self.turn is not None and (not isinstance(self.turn, int) or self.turn < 1):
            raise ValueError(f"{where}: turn must be an integer >= 1")
        wanted = self.tool_result
        if isinstance(wanted, Mapping):
            unknown = sorted(set(wanted) - set(TOOL_RESULT_KEYS))
            if unknown:
                raise ValueError(
                    f"{where}: tool_result: unknown key(s) {', '.join(unknown)}; "
                    f"valid: {', '.join(TOOL_RESULT_KEYS)}"
                )
        elif wanted is not None and not isinstance(wanted, (bool, str)):
            raise ValueError(f"{where}: tool_result must be true/false, a tool name or a mapping")
        if self.steps is None:
            return
        if not isinstance(self.steps, list) or not self.steps:
            raise ValueError(f"{where}: steps must be a non-empty list of replies")
        if any(getattr(self, key) is not None for key in ("text", "tool_use", "tool_input")):
            raise ValueError(f"{where}: give either steps or text/tool_use/tool_input, not both")
        self.steps = [
            _coerce_step(step, f"{where}: steps[{i}]") for i, step in enumerate(self.steps)
        ]

    def _validate_reply(self, where: str) -> None:
        for block in _tool_uses(self.tool_use):
            if not (isinstance(block, dict) and isinstance(block.get("name"), str)):
                raise ValueError(f"{where}: tool_use must be a mapping with a string 'name'")
            if not isinstance(block.get("input", {}), dict):
                raise ValueError(f"{where}: tool_use input must be a mapping")
        if isinstance(self.tool_use, list) and not self.tool_use:
            raise ValueError(f"{where}: tool_use must not be an empty list")
        if self.tool_use is not None and self.tool_input is not None:
            raise ValueError(f"{where}: give either tool_use or tool_input, not both")
        if self.fault is not None:
            if normalise_kind(self.fault) is None:
                raise ValueError(f"{where}: unknown fault {self.fault!r}; valid: {FAULT_KINDS}")

    def matches(self, path: str, convo: Conversation) -> bool:
        """Whether every condition of this rule holds for a request (ignores `times`)."""
        if self.path is not None and not fnmatch.fnmatchcase(path, self.path):
            return False
        if self.model is not None and not fnmatch.fnmatchcase(str(convo.model), self.model):
            return False
        if self.stream is not None and convo.stream != self.stream:
            return False
        if self.has_tools is not None and bool(convo.tools) != self.has_tools:
            return False
        if self.tool_choice_name is not None and convo.tool_choice != self.tool_choice_name:
            return False
        if self.turn is not None and convo.turn != self.turn:
            return False
        if self.steps is not None and convo.turn > len(self.steps):
            return False
        if self.tool_result is not None and not _tool_result_holds(self.tool_result, convo):
            return False
        everything = (
            convo.request_text() if self.request_contains or self.request_not_contains else ""
        )
        checks = (
            (self.system_contains, convo.system, True),
            (self.system_not_contains, convo.system, False),
            (self.messages_contain, convo.messages_text, True),
            (self.messages_not_contain, convo.messages_text, False),
            (self.last_message_contains, convo.last_user, True),
            (self.request_contains, everything, True),
            (self.request_not_contains, everything, False),
        )
        for needles, haystack, wanted in checks:
            for needle in _as_list(needles):
                if (needle in haystack) != wanted:
                    return False
        return True

    def claim(self, path: str, convo: Conversation) -> bool:
        """Match and, when `times` is set, use up one of its answers atomically."""
        if not self.matches(path, convo):
            return False
        with self._lock:
            if self.times is not None and self._used >= self.times:
                return False
            self._used += 1
        return True

    def reply_for(self, convo: Conversation) -> Rule:
        """The reply this rule gives a request: its step for the request's turn (named
        `<name>#<turn>`, inheriting the rule's latency and usage), templates filled in.

        Raises templates.TemplateError when a template cannot be filled.
        """
        reply: Rule = self
        if self.steps is not None:
            turn = convo.turn
            # matches() keeps a rule within its steps; the default reply repeats its last one
            step = self.steps[min(turn, len(self.steps)) - 1]
            reply = dataclasses.replace(
                step,
                name=f"{self.name}#{turn}",
                latency=step.latency if step.latency is not None else self.latency,
                usage=step.usage if step.usage is not None else self.usage,
            )
        where = f"rule {reply.name!r}"
        filled = {
            key: substitute(getattr(reply, key), convo, where)
            for key in ("text", "tool_use", "tool_input")
            if getattr(reply, key) is not None
        }
        return dataclasses.replace(reply, **filled) if filled else reply


def _coerce_step(step: Any, where: str) -> Rule:
    """One entry of `steps`: a mapping of reply keys, a bare text, or a Rule."""
    if isinstance(step, Rule):
        return step
    if isinstance(step, str):
        return Rule(text=step)
    if not isinstance(step, Mapping):
        raise ValueError(f"{where}: must be a mapping of reply keys or a text")
    unknown = sorted(set(step) - set(STEP_KEYS))
    if unknown:
        raise ValueError(
            f"{where}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(STEP_KEYS)}"
        )
    rule = Rule(**dict(step))
    rule._validate_reply(where)
    return rule


def coerce_rule(rule: Rule | Mapping[str, Any] | str, index: int = 0) -> Rule:
    """A Rule from a Rule, a mapping, or a bare string (a reply with that text)."""
    if isinstance(rule, str):
        rule = Rule(text=rule)
    elif not isinstance(rule, Rule):
        rule = Rule.from_dict(rule, index)
    else:
        rule.validate(index)  # a Rule built in Python: check it and coerce its steps
    if not rule.name:
        rule.name = f"rule{index}"
    return rule


def coerce_rules(rules: Iterable[Rule | Mapping[str, Any] | str] | None) -> list[Rule]:
    """Rules from any mix of Rule objects, mappings and strings."""
    return [coerce_rule(r, i) for i, r in enumerate(rules or [])]


def load_config(path: str | Path) -> dict[str, Any]:
    """Read a rules file (YAML or JSON): a list of rules, or a mapping with `rules`,
    `default`, `faults`, `latency` and `seed` keys. Returns that mapping, rules not yet coerced.
    """
    text = Path(path).read_text(encoding="utf-8")
    if str(path).endswith(".json"):
        data = json.loads(text)
    else:
        import yaml

        data = yaml.safe_load(text)
    if data is None:
        data = {}
    if isinstance(data, list):
        data = {"rules": data}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: must be a list of rules or a mapping with a 'rules' key")
    allowed = {"rules", "default", "faults", "latency", "seed"}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ValueError(f"{path}: unknown key(s) {', '.join(unknown)}; valid: {sorted(allowed)}")
    return data
