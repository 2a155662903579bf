"""Trigger sets: queries a skill's description should (or should not) make the agent load it
for, in each shape skills write them:

    [{"query": str, "should_trigger": bool}, ...]               skill-creator's trigger eval set
    {"skill_name": str, "queries" | "cases" | "triggers" | "evals": [{query | prompt,
     should_trigger | expected: "should_trigger" | "should_not_trigger"}, ...]}
    {"skill_name": str, "should_trigger": [str], "should_not_trigger": [str]}

Each query becomes a trigger task; keys a trigger task has no place for are kept as `extra`
(the import lists them). An `id` a query gives is its task id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .records import TriggerQuery, bad, check_sizes, is_text

LIST_KEYS = ("queries", "cases", "triggers", "evals", "tests")
QUERY_KEYS = ("query", "prompt")
SPLIT_KEYS = {"should_trigger": True, "should_not_trigger": False}
EXPECTED_WORDS = {"should_trigger": True, "should_not_trigger": False}
OWN_KEYS = ("query", "prompt", "should_trigger", "expected", "id")
TOP_KEYS = ("skill_name", "skill")


@dataclass(frozen=True)
class TriggerSet:
    queries: tuple[TriggerQuery, ...]
    ids: tuple[str | None, ...]  # the id each query gives (None: trigger-<n>)
    skill_name: str | None = None
    extra: tuple[str, ...] = ()  # top-level keys not carried over
    list_key: str = ""  # where the queries are, as messages name them ("" : the top level)


def _says_trigger(entry: Any) -> bool:
    """Whether a list entry is a trigger query: it says whether the skill should trigger."""
    if not isinstance(entry, Mapping):
        return False
    if "should_trigger" in entry:
        return True
    return entry.get("expected") in EXPECTED_WORDS and any(k in entry for k in QUERY_KEYS)


def _entries(data: Any) -> tuple[list[Any], str] | None:
    """The list of query objects of a trigger set, and where it is; None when `data` is none."""
    if isinstance(data, list):
        return (data, "") if data and any(map(_says_trigger, data)) else None
    if not isinstance(data, Mapping):
        return None
    for key in LIST_KEYS:
        value = data.get(key)
        if isinstance(value, list) and value and any(map(_says_trigger, value)):
            return value, key
    return None


def is_trigger_set(data: Any) -> bool:
    """Whether JSON data is a trigger set (above) rather than evals."""
    if _entries(data) is not None:
        return True
    return isinstance(data, Mapping) and any(
        isinstance(data.get(k), list) and data.get(k) and all(is_text(q) for q in data[k])
        for k in SPLIT_KEYS
    )


def parse_trigger_set(data: Any, path: Path) -> TriggerSet:
    """Check a trigger set (any shape above); the first problem is a located error."""
    name = None
    if isinstance(data, Mapping):
        given = next((data[k] for k in TOP_KEYS if is_text(data.get(k))), None)
        name = str(given) if given is not None else None
    if isinstance(data, Mapping) and _entries(data) is None and is_trigger_set(data):
        return _split(data, path, name)
    found = _entries(data)
    if found is None:
        raise bad(path, "top level", "must be a non-empty list of {query, should_trigger} objects")
    entries, key = found
    check_sizes(path, entries, key or "")
    queries: list[TriggerQuery] = []
    ids: list[str | None] = []
    for i, entry in enumerate(entries):
        where = f"{key}[{i}]"
        query, should, given_id = _query(entry, path, where)
        queries.append(
            TriggerQuery(query, should, tuple(str(k) for k in entry if k not in OWN_KEYS))
        )
        ids.append(given_id)
    top = tuple(str(k) for k in data if k not in (*TOP_KEYS, key)) if key else ()
    return TriggerSet(tuple(queries), tuple(ids), name, top, key)


def _query(entry: Any, path: Path, where: str) -> tuple[str, bool, str | None]:
    if not isinstance(entry, Mapping):
        raise bad(path, where, "must be an object with query and should_trigger")
    key = next((k for k in QUERY_KEYS if k in entry), QUERY_KEYS[0])
    if not is_text(entry.get(key)):
        raise bad(path, f"{where}.{key}", "must be a non-empty string")
    should = entry.get("should_trigger")
    if should is None and entry.get("expected") in EXPECTED_WORDS:
        should = EXPECTED_WORDS[entry["expected"]]
    if not isinstance(should, bool):
        raise bad(path, f"{where}.should_trigger", "must be true or false")
    given = entry.get("id")
    if given is not None and not (is_text(given) or isinstance(given, int)):
        raise bad(path, f"{where}.id", "must be a non-empty string or a number")
    return str(entry[key]), should, (str(given) if given is not None else None)


def _split(data: Mapping[str, Any], path: Path, name: str | None) -> TriggerSet:
    """`{should_trigger: [str], should_not_trigger: [str]}`."""
    queries: list[TriggerQuery] = []
    for key, should in SPLIT_KEYS.items():
        value = data.get(key, [])
        if not isinstance(value, list) or not all(is_text(q) for q in value):
            raise bad(path, key, "must be a list of non-empty strings (queries)")
        check_sizes(path, value, key)
        queries += [TriggerQuery(str(q), should) for q in value]
    top = tuple(str(k) for k in data if k not in (*TOP_KEYS, *SPLIT_KEYS))
    return TriggerSet(tuple(queries), (None,) * len(queries), name, top, "")


def trigger_set_document(queries: Sequence[TriggerQuery]) -> list[dict[str, Any]]:
    """skill-creator's form of a trigger set, as `export` writes it."""
    return [q.to_dict() for q in queries]


__all__ = ["TriggerSet", "is_trigger_set", "parse_trigger_set", "trigger_set_document"]
