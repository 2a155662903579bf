"""skill-creator's evals.json and the variants written after it, read and checked (a bad file
is one located error naming the file, the eval and the field).

evals.json (skill-creator references/schemas.md):
    {"skill_name": str, "evals": [{"id": int, "prompt": str, "expected_output": str,
                                   "files": [str], "expectations": [str]}]}
Also read, as authors write them: statements under `assertions` (the agentskills.io guide)
or `checks`, as strings, `{text}` objects or typed checks (checks.py); regular expression
lists `must_have` / `must_not_have`; string ids (a missing id is the eval's position); an
eval's `name` (its task id, as `eval_name`) and `category`; a missing skill_name when the
file sits in `<skill>/evals/` (the folder's name). Keys with no place in a suite are kept
as `extra`, so the import can say it dropped them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .checks import Checks, read_assertions, regex_list
from .records import NAME_KEY, EvalCase, EvalsFile, bad, check_sizes, is_text, skill_name_of

# Lists of statements (or typed checks), under the names in use; the first is skill-creator's.
STATEMENT_LISTS = ("expectations", "assertions", "checks")
REGEX_LISTS = {"must_have": False, "must_not_have": True}  # key -> negated
TITLE_KEY = "name"  # the agentskills.io guide's optional name of an eval: used as eval_name
EVAL_KEYS = ("id", "prompt", "expected_output", "files", "category", NAME_KEY, TITLE_KEY)
SHAPE = "non-empty strings (or {text} / {type, value} objects)"


def parse_evals(data: Any, path: Path) -> EvalsFile:
    """Check evals.json data (skill-creator's, and the variants above); the first problem is
    a located error `FILE: FIELD: why`."""
    if not isinstance(data, Mapping):
        raise bad(path, "top level", "must be an object with skill_name and evals")
    name, note, named = skill_name_of(data, ("skill_name", "skill"), path)
    evals = data.get("evals")
    if not isinstance(evals, list) or not evals:
        raise bad(path, "evals", "must be a non-empty list of evals")
    check_sizes(path, evals, "evals")
    cases: list[EvalCase] = []
    seen: dict[Any, int] = {}
    for i, entry in enumerate(evals):
        case = parse_case(entry, path, f"evals[{i}]", i)
        if case.id in seen:
            raise bad(
                path,
                f"evals[{i}].id",
                f"duplicate id {case.id!r}: evals[{seen[case.id]}] has it too",
            )
        seen[case.id] = i
        cases.append(case)
    known = ("skill_name", "evals", *(("skill",) if "skill_name" not in data else ()))
    return EvalsFile(
        skill_name=name,
        evals=tuple(cases),
        extra=tuple(str(k) for k in data if k not in known),
        notes=(note,) if note else (),
        named=named,
    )


def _optional_text(entry: Mapping[str, Any], key: str, path: Path, where: str) -> str | None:
    value = entry.get(key)
    if value is not None and not is_text(value):
        raise bad(path, f"{where}.{key}", "must be a non-empty string")
    return str(value) if value is not None else None


def _statements(entry: Mapping[str, Any], path: Path, where: str) -> Checks:
    """The statements and typed checks of every list the eval has, in order; a statement
    written under two names (expectations and assertions, as some files repeat them) counts
    once."""
    found = Checks()
    for key in STATEMENT_LISTS:
        more = read_assertions(path, f"{where}.{key}", entry.get(key), shape=SHAPE)
        fresh = tuple(s for s in dict.fromkeys(more.statements) if s not in found.statements)
        found += Checks(fresh, more.judges, more.dropped)
    for key, negate in REGEX_LISTS.items():
        found += regex_list(path, f"{where}.{key}", entry.get(key), negate=negate)
    return found


def parse_case(entry: Any, path: Path, where: str, index: int) -> EvalCase:
    """One entry of `evals`. An id may be a string; a missing one is the entry's position."""
    if not isinstance(entry, Mapping):
        raise bad(path, where, "must be an object with id and prompt")
    eval_id = entry.get("id", index + 1)
    if isinstance(eval_id, bool) or not (isinstance(eval_id, int) or is_text(eval_id)):
        raise bad(path, f"{where}.id", "must be an integer (or a non-empty string)")
    if not is_text(entry.get("prompt")):
        raise bad(path, f"{where}.prompt", "must be a non-empty string")
    expected = entry.get("expected_output", "")
    if expected is None:
        expected = ""
    if not isinstance(expected, str):
        raise bad(path, f"{where}.expected_output", "must be a string")
    name_key = NAME_KEY if NAME_KEY in entry else TITLE_KEY
    name = _optional_text(entry, name_key, path, where)
    found = _statements(entry, path, where)
    used = (*EVAL_KEYS, *STATEMENT_LISTS, *REGEX_LISTS)
    labels = (TITLE_KEY,) if NAME_KEY in entry and TITLE_KEY in entry else ()  # name dropped
    return EvalCase(
        id=eval_id if isinstance(eval_id, int) else str(eval_id),
        prompt=entry["prompt"],
        expected_output=expected,
        files=_files(path, f"{where}.files", entry.get("files")),
        expectations=found.statements,
        name=name,
        extra=tuple(str(k) for k in entry if k not in used or k in labels),
        checks=found.judges,
        category=_optional_text(entry, "category", path, where),
        dropped=found.dropped,
    )


def _files(path: Path, where: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(is_text(v) for v in value):
        raise bad(path, where, "must be a list of non-empty strings (paths)")
    return tuple(
        v.replace("\\", "/") for v in value
    )  # written on Windows: a backslash between parts


__all__ = ["STATEMENT_LISTS", "parse_case", "parse_evals"]
