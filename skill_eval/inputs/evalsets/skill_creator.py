"""skill-creator's evals.json and the variants written after it, read and checked (a bad file
is one located error naming the file, the eval and the field).

evals.json (skill-creator references/schemas.md):
    {"skill_name": str, "evals": [{"id": int, "prompt": str, "expected_output": str,
                                   "files": [str], "expectations": [str]}]}
Also read, as authors write them: the evals as a bare list or under `test_cases`; string ids
(a missing id is the eval's position); the prompt under `input`, `instruction`, `query` or
`task` when there is no `prompt`, or in the file `prompt_file` names beside the eval set;
every check field checks.py knows; a `rubric` (a string a model scores, at `pass_threshold`;
a list is statements); an eval's `name` (its task id, as `eval_name`), `category`,
`description` and `timeout_seconds`; a missing skill_name when the file sits in
`<skill>/evals/` (the folder's name). Keys with no place in a suite are kept as `extra`, so
the reader can say it dropped them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...core.bounded import FileTooLarge, mib, read_bounded
from ...core.paths import inside
from ...core.utf8 import NotUtf8, utf8_text
from .checks import CHECK_FIELDS, read_checks, read_statements
from .records import (
    MAX_TEXT_BYTES,
    NAME_KEY,
    EvalCase,
    EvalsFile,
    bad,
    check_sizes,
    is_text,
    skill_name_of,
)

TITLE_KEY = "name"  # the agentskills.io guide's optional name of an eval: used as eval_name
PROMPT_KEYS = ("prompt", "input", "instruction", "query", "task")
LIST_KEYS = ("evals", "test_cases")
THRESHOLD_KEYS = ("pass_threshold", "threshold")
EVAL_KEYS = (
    "id", "expected_output", "files", "category", "description", "timeout_seconds", NAME_KEY,
    TITLE_KEY, "rubric", *THRESHOLD_KEYS, *CHECK_FIELDS,
)  # fmt: skip


def evals_list(data: Any) -> tuple[list[Any], str] | None:
    """The list of evals of a file, and where it is (`evals`, `test_cases`, "" for a bare
    list); None when the file has none."""
    if isinstance(data, list):
        return data, ""
    if isinstance(data, Mapping):
        for key in LIST_KEYS:
            if key in data:
                return data[key], key
    return None


def parse_evals(data: Any, path: Path) -> EvalsFile:
    """Check evals.json data (skill-creator's, and the variants above); the first problem is
    a located error `FILE: FIELD: why`."""
    found = evals_list(data)
    if found is None:
        raise bad(path, "top level", "must be an object with skill_name and evals")
    evals, key = found
    name, note, named = skill_name_of(
        data if isinstance(data, Mapping) else {}, ("skill_name", "skill"), path
    )
    if not isinstance(evals, list) or not evals:
        raise bad(path, key or "top level", "must be a non-empty list of evals")
    check_sizes(path, evals, key)
    cases: list[EvalCase] = []
    seen: dict[Any, int] = {}
    for i, entry in enumerate(evals):
        case = parse_case(entry, path, f"{key}[{i}]", i)
        if case.id in seen:
            raise bad(
                path,
                f"{key}[{i}].id",
                f"duplicate id {case.id!r}: {key}[{seen[case.id]}] has it too",
            )
        seen[case.id] = i
        cases.append(case)
    known = (
        "skill_name",
        key,
        *(("skill",) if isinstance(data, Mapping) and "skill_name" not in data else ()),
    )
    extra = tuple(str(k) for k in data if k not in known) if isinstance(data, Mapping) else ()
    return EvalsFile(
        skill_name=name,
        evals=tuple(cases),
        extra=extra,
        notes=(note,) if note else (),
        list_key=key,
        named=named,
    )


def _optional_text(entry: Mapping[str, Any], key: str, path: Path, where: str) -> str | None:
    value = entry.get(key)
    if value is not None and not is_text(value):
        raise bad(path, f"{where}.{key}", "must be a non-empty string")
    return str(value) if value is not None else None


def _prompt(entry: Mapping[str, Any], path: Path, where: str) -> tuple[str, str]:
    """The eval's prompt and the key it was under; `prompt_file` names a text file beside the
    eval set (read capped, never through a link, never outside that folder)."""
    key = next((k for k in PROMPT_KEYS if is_text(entry.get(k))), None)
    if key is not None:
        return str(entry[key]), key
    name = entry.get("prompt_file")
    if name is None:
        raise bad(path, f"{where}.prompt", "must be a non-empty string")
    return _prompt_file(name, path, f"{where}.prompt_file"), "prompt_file"


def _prompt_file(name: Any, path: Path, where: str) -> str:
    folder = path.resolve().parent
    file = folder / str(name)
    if not is_text(name) or not inside(folder, file) or file.is_symlink():
        raise bad(path, where, f"must name a file beside {path.name} (no link, no `..`): {name!r}")
    try:
        text = utf8_text(read_bounded(file, MAX_TEXT_BYTES))
    except FileNotFoundError:
        raise bad(path, where, f"not found: {name!r} (looked in {folder})") from None
    except FileTooLarge:
        raise bad(
            path, where, f"{name!r} is over the {mib(MAX_TEXT_BYTES)} a prompt may hold"
        ) from None
    except (OSError, NotUtf8) as exc:
        raise bad(path, where, f"cannot read {name!r}: {exc}") from None
    if not text.strip():
        raise bad(path, where, f"{name!r} is empty")
    return text


def _rubric(
    entry: Mapping[str, Any], path: Path, where: str
) -> tuple[str | None, float | None, tuple[str, ...]]:
    """(a rubric string, its pass threshold, statements of a rubric list)."""
    rubric = entry.get("rubric")
    key = next((k for k in THRESHOLD_KEYS if k in entry), None)
    threshold = entry.get(key) if key else None
    if threshold is not None and (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not 0 <= threshold <= 1
    ):
        raise bad(
            path,
            f"{where}.{key}",
            f"must be a number from 0 to 1 (the share of the rubric's score); got {threshold!r}",
        )
    if rubric is None or rubric == []:
        return None, None, ()
    if isinstance(rubric, list):
        return None, None, read_statements(path, f"{where}.rubric", rubric).statements
    if not is_text(rubric):
        raise bad(
            path, f"{where}.rubric", "must be a non-empty string (what a model grades) or a list"
        )
    return str(rubric).strip(), (float(threshold) if threshold is not None else None), ()


def _timeout(entry: Mapping[str, Any], path: Path, where: str) -> float | None:
    value = entry.get("timeout_seconds")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 86400:
        raise bad(path, f"{where}.timeout_seconds", "must be a number of seconds from 0 to 86400")
    return float(value)


def parse_case(entry: Any, path: Path, where: str, index: int) -> EvalCase:
    """One eval. An id may be a string; a missing one is the eval's position."""
    if not isinstance(entry, Mapping):
        raise bad(path, where, "must be an object with id and prompt")
    eval_id = entry.get("id", index + 1)
    if isinstance(eval_id, bool) or not (isinstance(eval_id, int) or is_text(eval_id)):
        raise bad(path, f"{where}.id", "must be an integer (or a non-empty string)")
    prompt, prompt_key = _prompt(entry, path, where)
    expected = entry.get("expected_output") or ""
    if not isinstance(expected, str):
        raise bad(path, f"{where}.expected_output", "must be a string")
    name_key = NAME_KEY if NAME_KEY in entry else TITLE_KEY
    name = _optional_text(entry, name_key, path, where)
    checks = read_checks(path, where, entry)
    rubric, threshold, rubric_statements = _rubric(entry, path, where)
    labels = (TITLE_KEY,) if NAME_KEY in entry and TITLE_KEY in entry else ()  # name dropped
    used = (*EVAL_KEYS, prompt_key)
    return EvalCase(
        id=eval_id if isinstance(eval_id, int) else str(eval_id),
        prompt=prompt,
        expected_output=expected,
        files=_files(path, f"{where}.files", entry.get("files")),
        expectations=checks.statements
        + tuple(s for s in rubric_statements if s not in checks.statements),
        name=name,
        extra=tuple(str(k) for k in entry if k not in used or k in labels),
        checks=checks.judges,
        rubric=rubric,
        rubric_threshold=threshold,
        category=_optional_text(entry, "category", path, where),
        description=_optional_text(entry, "description", path, where) or "",
        timeout_seconds=_timeout(entry, path, where),
        dropped=checks.dropped,
    )


def _files(path: Path, where: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(is_text(v) for v in value):
        raise bad(path, where, "must be a list of non-empty strings (paths)")
    return tuple(v.replace("\\", "/") for v in value)  # written on Windows: backslashes


__all__ = ["PROMPT_KEYS", "evals_list", "parse_case", "parse_evals"]
