"""Reply rules for the fake Anthropic server: which request gets which scripted reply.

A rule is a flat mapping of match conditions (all must hold) and reply actions; rules are tried
in order and the first that matches answers. See tests/fakes/README.md for the file format.
"""

from __future__ import annotations

import fnmatch
import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fakes.faults import FAULT_KINDS, normalise_kind

MATCH_KEYS = (
    "path",
    "model",
    "stream",
    "system_contains",
    "system_not_contains",
    "messages_contain",
    "messages_not_contain",
    "last_message_contains",
    "has_tools",
    "tool_choice_name",
)
REPLY_KEYS = (
    "text",
    "tool_use",
    "tool_input",
    "stop_reason",
    "latency",
    "fault",
    "usage",
    "times",
)


def _text_of(content: Any) -> str:
    """All text in a message content, system prompt or block list, tool results included."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(item) for item in content)
    if isinstance(content, dict):
        parts = []
        for key in ("text", "content", "thinking"):
            if key in content:
                parts.append(_text_of(content[key]))
        if content.get("type") == "tool_use" and "input" in content:
            parts.append(json.dumps(content["input"], ensure_ascii=False))
        return "\n".join(parts)
    return str(content)


def system_text(body: Mapping[str, Any]) -> str:
    """The system prompt of a Messages request as one string (blocks joined by newlines)."""
    return _text_of(body.get("system"))


def message_texts(body: Mapping[str, Any]) -> list[str]:
    """The text of each message of a Messages request, in order, tool results included."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return []
    return [_text_of(m.get("content")) if isinstance(m, dict) else "" for m in messages]


def last_user_text(body: Mapping[str, Any]) -> str:
    """The text of the last message whose role is "user" (a prompt or the newest tool results)."""
    messages = body.get("messages")
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "user":
            return _text_of(message.get("content"))
    return ""


def tool_choice_name(body: Mapping[str, Any]) -> str | None:
    """The forced tool's name when `tool_choice` is `{"type": "tool", "name": X}`."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool":
        name = choice.get("name")
        return name if isinstance(name, str) else None
    return None


def _as_list(value: str | Iterable[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


@dataclass
class Rule:
    """One scripted reply and the conditions under which it is given.

    Match conditions (all given ones must hold; a list of strings means every one must occur):
    `path` (glob, default any), `model` (glob), `stream` (bool), `system_contains`,
    `system_not_contains`, `messages_contain` (text of any message, tool results included),
    `messages_not_contain`, `last_message_contains` (the last user message), `has_tools` (bool),
    `tool_choice_name`.

    Reply actions: `text`, `tool_use` (`{"name": ..., "input": {...}}`), `tool_input` (a
    tool_use of the forced tool from `tool_choice`, else of the first tool offered),
    `stop_reason` (default `end_turn`, or `tool_use` when a tool is called), `latency`
    (seconds, replaces the server's global latency), `fault` (answer with a fault kind instead),
    `usage` (overrides of the computed usage fields), `times` (answer at most this many times,
    then let later rules match).
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
    has_tools: bool | None = None
    tool_choice_name: str | None = None
    text: str | None = None
    tool_use: dict[str, Any] | None = None
    tool_input: dict[str, Any] | None = None
    stop_reason: str | None = None
    latency: float | None = None
    fault: str | None = None
    usage: dict[str, int] | None = None
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
        """Raise ValueError when the rule's actions are inconsistent."""
        where = f"rules[{index}] ({self.name})" if self.name else f"rules[{index}]"
        if self.tool_use is not None and not (
            isinstance(self.tool_use, dict) and isinstance(self.tool_use.get("name"), str)
        ):
            raise ValueError(f"{where}: tool_use must be a mapping with a string 'name'")
        if self.tool_use is not None and self.tool_input is not None:
            raise ValueError(f"{where}: give either tool_use or tool_input, not both")
        if self.times is not None and self.times < 1:
            raise ValueError(f"{where}: times must be >= 1")
        if self.fault is not None:
            if normalise_kind(self.fault) is None:
                raise ValueError(f"{where}: unknown fault {self.fault!r}; valid: {FAULT_KINDS}")

    def matches(self, path: str, body: Mapping[str, Any]) -> bool:
        """Whether every condition of this rule holds for a request (ignores `times`)."""
        if self.path is not None and not fnmatch.fnmatchcase(path, self.path):
            return False
        if self.model is not None and not fnmatch.fnmatchcase(str(body.get("model")), self.model):
            return False
        if self.stream is not None and bool(body.get("stream")) != self.stream:
            return False
        if self.has_tools is not None and bool(body.get("tools")) != self.has_tools:
            return False
        if self.tool_choice_name is not None and tool_choice_name(body) != self.tool_choice_name:
            return False
        system = system_text(body)
        messages = message_texts(body)
        joined = "\n".join(messages)
        last = last_user_text(body)
        checks = (
            (self.system_contains, system, True),
            (self.system_not_contains, system, False),
            (self.messages_contain, joined, True),
            (self.messages_not_contain, joined, False),
            (self.last_message_contains, last, True),
        )
        for needles, haystack, wanted in checks:
            for needle in _as_list(needles):
                if (needle in haystack) != wanted:
                    return False
        return True

    def claim(self, path: str, body: Mapping[str, Any]) -> bool:
        """Match and, when `times` is set, use up one of its answers atomically."""
        if not self.matches(path, body):
            return False
        with self._lock:
            if self.times is not None and self._used >= self.times:
                return False
            self._used += 1
        return True


def coerce_rule(rule: Rule | Mapping[str, Any] | str, index: int = 0) -> Rule:
    """A Rule from a Rule, a mapping, or a bare string (a reply with that text)."""
    if isinstance(rule, str):
        rule = Rule(text=rule)
    elif not isinstance(rule, Rule):
        rule = Rule.from_dict(rule, index)
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
