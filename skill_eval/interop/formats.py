"""skill-creator's files as data: `evals/evals.json` and the trigger eval set, read and
checked (a bad file is one UsageError naming the file and the field), and written back.

evals.json (skill-creator references/schemas.md):
    {"skill_name": str, "evals": [{"id": int, "prompt": str, "expected_output": str,
                                   "files": [str], "expectations": [str]}]}
Its SKILL.md and the agentskills.io guide call the statements `assertions`: accepted as an
alias, as strings, `{id, text}` objects or typed checks (interop/assertions.py). Also read:
string ids (a missing id is the eval's position), an eval's optional `name` (its task id, as
`eval_name`), and a missing skill_name when the file sits in `<skill>/evals/` (the folder's
name). Trigger eval set (scripts/run_eval.py): [{"query": str, "should_trigger": bool}].
Keys with no place in a suite are kept as `extra`, so the import can say it dropped them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.bounded import read_bounded
from ..errors import UsageError
from .assertions import Checks, bad, is_text, read_assertions

EVAL_KEYS = ("id", "prompt", "expected_output", "files", "expectations")
# Not in schemas.md but written by our export (a task id that is not eval-<n>) and used by
# skill-creator's eval_metadata.json; read back so suite -> evals.json -> suite keeps ids.
NAME_KEY = "eval_name"
ALIAS_KEY = "assertions"
TITLE_KEY = "name"  # the agentskills.io guide's optional name of an eval: used as eval_name
TRIGGER_KEYS = ("query", "should_trigger")


@dataclass(frozen=True)
class EvalCase:
    """One entry of evals.json."""

    id: int | str
    prompt: str
    expected_output: str = ""
    files: tuple[str, ...] = ()
    expectations: tuple[str, ...] = ()
    name: str | None = None  # eval_name (or name), when given
    extra: tuple[str, ...] = ()  # keys we do not carry over
    # Deterministic checks (typed assertions, Driftproof's rubric checks) as judge configs,
    # the share of them that must pass (None: all), and each assertion left out, with why.
    checks: tuple[Mapping[str, Any], ...] = ()
    threshold: float | None = None
    dropped: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The entry in skill-creator's key order; eval_name only when set."""
        out: dict[str, Any] = {"id": self.id}
        if self.name is not None:
            out[NAME_KEY] = self.name
        out.update(
            prompt=self.prompt,
            expected_output=self.expected_output,
            files=list(self.files),
            expectations=list(self.expectations),
        )
        return out


@dataclass(frozen=True)
class EvalsFile:
    skill_name: str
    evals: tuple[EvalCase, ...]
    extra: tuple[str, ...] = ()  # top-level keys we do not carry over
    notes: tuple[str, ...] = ()  # what the reader assumed (a skill name from the folder)
    source_format: str = "skill-creator evals.json"
    list_key: str = "evals"  # the key holding the evals, as messages name them

    def to_dict(self) -> dict[str, Any]:
        return {"skill_name": self.skill_name, "evals": [e.to_dict() for e in self.evals]}


@dataclass(frozen=True)
class TriggerQuery:
    query: str
    should_trigger: bool
    extra: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "should_trigger": self.should_trigger}


def read_json(path: Path, what: str) -> Any:
    """The parsed JSON of `path`; a UsageError naming the file when it cannot be. Read with a
    cap and never through a final link: a skill folder's eval set is the candidate's data."""
    try:
        text = read_bounded(path).decode("utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: {what} not found", path=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the {what}: {exc}", path=str(path)) from None
    try:
        data = json.loads(text)
        # "\ud800" escapes decode to lone surrogates, which no UTF-8 file (the suite) can hold
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(
            f"{path}: holds a string that is not valid Unicode (a lone "
            "surrogate escape such as \\ud800)",
            path=str(path),
        ) from None
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"{path}: not valid JSON: {exc}".splitlines()[0], path=str(path)) from None
    return data


def _bad(path: Path, where: str, message: str) -> UsageError:
    return bad(path, where, message)


def _text(value: Any) -> bool:
    return is_text(value)


def _strings(path: Path, where: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(_text(v) for v in value):
        raise _bad(path, where, "must be a list of non-empty strings")
    return tuple(value)


def skill_name_of(data: Mapping[str, Any], keys: Sequence[str], path: Path) -> tuple[str, str]:
    """The skill's name: the first of `keys` given, else the folder of the skill the file
    sits in (`<skill>/evals/<file>` beside a SKILL.md), with a note saying so."""
    for key in keys:
        if _text(data.get(key)):
            return str(data[key]), ""
    root = default_files_root(path)
    if path.resolve().parent.name == "evals" and (root / "SKILL.md").is_file():
        return root.name, f"{keys[0]}: not given; named after the skill folder {root.name!r}"
    raise _bad(path, keys[0], "must be a non-empty string (the skill's name)")


def parse_evals(data: Any, path: Path) -> EvalsFile:
    """Check evals.json data (skill-creator's, and the agentskills.io guide's variants); the
    first problem is a UsageError `FILE: FIELD: why`."""
    if not isinstance(data, Mapping):
        raise _bad(path, "top level", "must be an object with skill_name and evals")
    name, note = skill_name_of(data, ("skill_name", "skill"), path)
    evals = data.get("evals")
    if not isinstance(evals, list) or not evals:
        raise _bad(path, "evals", "must be a non-empty list of evals")
    cases: list[EvalCase] = []
    seen: dict[Any, int] = {}
    for i, entry in enumerate(evals):
        case = parse_case(entry, path, f"evals[{i}]", i)
        if case.id in seen:
            raise _bad(
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
    )


def parse_case(entry: Any, path: Path, where: str, index: int) -> EvalCase:
    """One entry of `evals`. An id may be a string; a missing one is the entry's position."""
    if not isinstance(entry, Mapping):
        raise _bad(path, where, "must be an object with id and prompt")
    eval_id = entry.get("id", index + 1)
    if isinstance(eval_id, bool) or not (isinstance(eval_id, int) or _text(eval_id)):
        raise _bad(path, f"{where}.id", "must be an integer (or a non-empty string)")
    if not _text(entry.get("prompt")):
        raise _bad(path, f"{where}.prompt", "must be a non-empty string")
    expected = entry.get("expected_output", "")
    if expected is None:
        expected = ""
    if not isinstance(expected, str):
        raise _bad(path, f"{where}.expected_output", "must be a string")
    name = entry.get(NAME_KEY, entry.get(TITLE_KEY))
    name_key = NAME_KEY if NAME_KEY in entry else TITLE_KEY
    if name is not None and not _text(name):
        raise _bad(path, f"{where}.{name_key}", "must be a non-empty string")
    shape = "non-empty strings (or {text} / {type, value} objects)"
    statements = read_assertions(
        path, f"{where}.expectations", entry.get("expectations"), shape=shape
    )
    alias = read_assertions(path, f"{where}.{ALIAS_KEY}", entry.get(ALIAS_KEY), shape=shape)
    if statements.statements and alias.statements:  # the same statements under both names
        if set(alias.statements) - set(statements.statements):
            raise _bad(path, f"{where}.{ALIAS_KEY}", "differs from expectations: give one")
        alias = Checks(judges=alias.judges, dropped=alias.dropped)
    found = statements + alias
    labels = (NAME_KEY,) if NAME_KEY in entry else (NAME_KEY, TITLE_KEY)  # both: name dropped
    return EvalCase(
        id=eval_id if isinstance(eval_id, int) else str(eval_id),
        prompt=entry["prompt"],
        expected_output=expected,
        files=_strings(path, f"{where}.files", entry.get("files")),
        expectations=found.statements,
        name=str(name) if name is not None else None,
        extra=tuple(str(k) for k in entry if k not in (*EVAL_KEYS, *labels, ALIAS_KEY)),
        checks=found.judges,
        dropped=found.dropped,
    )


def parse_trigger_set(data: Any, path: Path) -> list[TriggerQuery]:
    """Check a trigger eval set: a non-empty list of {query, should_trigger}."""
    if not isinstance(data, list) or not data:
        raise _bad(path, "top level", "must be a non-empty list of {query, should_trigger} objects")
    found: list[TriggerQuery] = []
    for i, entry in enumerate(data):
        where = f"[{i}]"
        if not isinstance(entry, Mapping):
            raise _bad(path, where, "must be an object with query and should_trigger")
        if not _text(entry.get("query")):
            raise _bad(path, f"{where}.query", "must be a non-empty string")
        if not isinstance(entry.get("should_trigger"), bool):
            raise _bad(path, f"{where}.should_trigger", "must be true or false")
        found.append(
            TriggerQuery(
                entry["query"],
                entry["should_trigger"],
                tuple(str(k) for k in entry if k not in TRIGGER_KEYS),
            )
        )
    return found


def trigger_set_document(queries: Sequence[TriggerQuery]) -> list[dict[str, Any]]:
    return [q.to_dict() for q in queries]


def files_note(files: Sequence[str]) -> str:
    """What import appends to the prompt of an eval with input files. skill-creator tells
    its executor "Input files: ..." beside the prompt; a suite task has only its prompt, so
    the list goes there (export strips exactly this text again)."""
    return f"\n\nInput files (in your working directory): {', '.join(files)}" if files else ""


def default_files_root(json_path: Path) -> Path:
    """Where evals.json's `files` are relative to: the skill root, i.e. the folder above
    `evals/` when the file sits in one (skill-creator's layout), else the file's own folder."""
    folder = json_path.resolve().parent
    return folder.parent if folder.name == "evals" else folder
