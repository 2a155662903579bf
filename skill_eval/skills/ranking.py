"""Ranking artifacts (the discriminator's output, pipeline mode): read and validated against
schemas/ranking.schema.json, every problem reported at once as `<file>: <field>: <message>`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..core.paths import SCHEMAS_DIR
from ..core.validation import schema_problems
from ..errors import Problem, SkillError

RANKING_SCHEMA = SCHEMAS_DIR / "ranking.schema.json"


@dataclass(frozen=True)
class Ranking:
    """A validated ranking artifact. `path` is absolute; `candidates` are the raw
    `scored_candidates` entries, in file order."""

    path: Path
    data: dict[str, Any]
    run_id: str
    lane: str | None
    target: dict[str, Any]
    candidates: tuple[dict[str, Any], ...]

    @property
    def candidate_ids(self) -> list[str]:
        return [str(c["id"]) for c in self.candidates]


def load_ranking(path: str | Path) -> Ranking:
    """Read and validate a ranking artifact (schemas/ranking.schema.json). Every problem is
    reported at once, one per line, as `<file>: <field>: <message>`."""
    given = Path(path)
    if not given.is_file():
        what = "is not a file" if given.exists() else "not found"
        raise SkillError(f"ranking artifact {what}: {given}", path=str(given))
    try:
        text = given.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkillError(f"{given}: not UTF-8 (byte {exc.start})", path=str(given)) from None
    except OSError as exc:
        raise SkillError(
            f"cannot read ranking artifact {given}: {exc.strerror}", path=str(given)
        ) from None
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise SkillError(
            f"{given}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}", path=str(given)
        ) from None
    except ValueError as exc:
        raise SkillError(f"{given}: invalid JSON: {exc}", path=str(given)) from None
    problems = _schema_problems(str(given), data)
    if not problems:
        problems = _duplicate_ids(str(given), data["scored_candidates"])
    if problems:
        raise SkillError("\n".join(str(p) for p in problems), path=str(given))
    return Ranking(
        path=given.resolve(),
        data=data,
        run_id=data["run_id"],
        lane=data.get("lane"),
        target=dict(data.get("target") or {}),
        candidates=tuple(data["scored_candidates"]),
    )


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a valid JSON number")


@cache
def _ranking_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(RANKING_SCHEMA.read_text(encoding="utf-8"))
    return schema


def _schema_problems(file: str, data: Any) -> list[Problem]:
    return schema_problems(data, _ranking_schema(), path=file)


def _duplicate_ids(file: str, candidates: list[dict[str, Any]]) -> list[Problem]:
    first: dict[str, int] = {}
    problems = []
    for index, entry in enumerate(candidates):
        cid = entry["id"]
        if cid in first:
            problems.append(
                Problem(
                    path=file,
                    field=f"scored_candidates[{index}].id",
                    message=f"duplicate id {cid!r} (also scored_candidates[{first[cid]}])",
                )
            )
        first.setdefault(cid, index)
    return problems
