"""The eval sets' records (an eval, a file of them, a trigger query) and what every reader of
them shares: reading the JSON (capped, never through a link), the one-line error naming the
file, the eval and the field, and the size an eval's text may have."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.bounded import mib, read_bounded
from ...core.safeyaml import MAX_BYTES
from ...core.utf8 import NotUtf8, utf8_text
from ...errors import Problem, SuiteError

# The most text one field of an eval may hold: a suite file holds no more in all (a prompt
# past it is a mistake, a pasted dataset, and would not fit a model's context anyway).
MAX_TEXT_BYTES = MAX_BYTES
# Where an eval's `files` are relative to, when the eval set sits in a skill's evals/.
EVALS_FOLDER = "evals"
# `id` in the output of the export (a task id that is not eval-<n>), read back.
NAME_KEY = "eval_name"


def bad(path: Path, where: str, message: str, line: int | None = None) -> SuiteError:
    """The error of an eval set that cannot be read: `FILE[:LINE]: FIELD: why`, one line,
    exit 2."""
    problem = Problem(str(path), message, field=where, line=line)
    return SuiteError(str(problem), path=str(path), problems=[problem])


def is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


@dataclass(frozen=True)
class EvalCase:
    """One eval, whatever shape it was written in, as the suite needs it."""

    id: int | str
    prompt: str
    expected_output: str = ""
    files: tuple[str, ...] = ()
    expectations: tuple[str, ...] = ()  # statements a model grades PASS/FAIL
    name: str | None = None  # eval_name (or name), when given
    extra: tuple[str, ...] = ()  # keys we do not carry over
    # Deterministic checks as judge configs; the share of them that must pass (None: all).
    checks: tuple[Mapping[str, Any], ...] = ()
    threshold: float | None = None
    # A rubric a model scores 0..1 (Driftproof), passing at its threshold.
    rubric: str | None = None
    rubric_threshold: float | None = None
    # Judges whose readings are recorded but decide nothing (Driftproof's checks).
    observers: tuple[Mapping[str, Any], ...] = ()
    category: str | None = None
    description: str = ""  # what the eval is about (Driftproof's claim)
    timeout_seconds: float | None = None
    source: Mapping[str, Any] = field(default_factory=dict)  # kept with the task (grounding)
    dropped: tuple[str, ...] = ()  # `FIELD: why`, one per thing left out

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
    named: bool = True  # whether the file names its skill (else the folder named it)

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
    """The parsed JSON of `path`; one located error when it cannot be. Read with a cap and
    never through a final link: a skill folder's eval set is the candidate's data."""
    if path.is_symlink():
        raise bad(
            path, "", "is a link; eval files are read as files of their own, never through one"
        )
    try:
        text = utf8_text(read_bounded(path))
    except FileNotFoundError:
        raise bad(path, "", f"{what} not found") from None
    except NotUtf8 as exc:  # in the words a suite's YAML gets (core/utf8.py)
        raise bad(path, "", str(exc), exc.line) from None
    except OSError as exc:
        raise bad(path, "", f"cannot read the {what}: {exc}") from None
    try:
        data = json.loads(text)
        # "\ud800" escapes decode to lone surrogates, which no UTF-8 file (the suite) can hold
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise bad(
            path,
            "",
            "holds a string that is not valid Unicode (a lone surrogate escape such as \\ud800)",
        ) from None
    except (ValueError, RecursionError) as exc:
        raise bad(path, "", f"not valid JSON: {exc}".splitlines()[0]) from None
    return data


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """(field, text) of every string in `value`, at any depth."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{where}[{i}]")


def check_sizes(path: Path, entries: Sequence[Any], list_key: str) -> None:
    """A field of an eval over MAX_TEXT_BYTES is refused, naming the eval, the field, its size
    and the limit (the biggest first)."""
    found = [
        (len(text.encode("utf-8")), where)
        for i, entry in enumerate(entries)
        for where, text in _strings(entry, f"{list_key}[{i}]")
        if len(text) > MAX_TEXT_BYTES // 4
    ]
    over = sorted((size, where) for size, where in found if size > MAX_TEXT_BYTES)
    if over:
        size, where = over[-1]
        more = f" ({len(over) - 1} more fields are over it too)" if len(over) > 1 else ""
        raise bad(
            path,
            where,
            f"{size:,} bytes, over the {mib(MAX_TEXT_BYTES)} one field of an eval may hold "
            f"(what a whole suite file holds){more}",
        )


def collapse(lines: Sequence[str]) -> tuple[str, ...]:
    """Lines that differ only in their indexes as one (`evals[*].tags: ... (12 times)`), in
    the order first seen: a key every eval has is said once, not once per eval."""
    groups: dict[str, list[str]] = {}
    for line in lines:
        groups.setdefault(re.sub(r"\[\d+\]", "[*]", line), []).append(line)
    return tuple(
        members[0] if len(members) == 1 else f"{key} ({len(members)} times)"
        for key, members in groups.items()
    )


def default_files_root(json_path: Path) -> Path:
    """Where an eval set's `files` are relative to: the skill root, i.e. the folder above
    `evals/` when the file sits in one (skill-creator's layout), else the file's own folder."""
    folder = json_path.resolve().parent
    return folder.parent if folder.name == EVALS_FOLDER else folder


def skill_name_of(
    data: Mapping[str, Any], keys: Sequence[str], path: Path
) -> tuple[str, str, bool]:
    """(the skill's name, a note when it was assumed, whether the file gave it): the first of
    `keys` given, else the folder of the skill the file sits in (`<skill>/evals/<file>` beside
    a SKILL.md), else the eval set's own folder."""
    for key in keys:
        if is_text(data.get(key)):
            return str(data[key]), "", True
    root = default_files_root(path)
    if not (path.resolve().parent.name == EVALS_FOLDER and (root / "SKILL.md").is_file()):
        root = path.resolve().parent
    return root.name, f"{keys[0]}: not given; named after the folder {root.name!r}", False


__all__ = [
    "EVALS_FOLDER",
    "MAX_TEXT_BYTES",
    "NAME_KEY",
    "EvalCase",
    "EvalsFile",
    "TriggerQuery",
    "bad",
    "check_sizes",
    "collapse",
    "default_files_root",
    "is_text",
    "read_json",
    "skill_name_of",
]
