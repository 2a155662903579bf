"""The review's run directory: every stage's input and output, as written, for the record.

<state-root>/reviews/<id>/round-N/<stage>.input.md|json, <stage>.output.md|json
<state-root>/reviews/<id>/suite/, qa-report.md, decision.json, decision.md
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..core.paths import atomic_write_text


def new_review_id() -> str:
    return f"review-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


class ReviewStore:
    def __init__(self, state_root: Path, review_id: str | None = None) -> None:
        self.review_id = review_id or new_review_id()
        self.root = state_root / "reviews" / self.review_id
        self.root.mkdir(parents=True, exist_ok=False)

    def round_dir(self, number: int) -> Path:
        return self.root / f"round-{number}"

    def save(self, number: int, name: str, content: str | dict[str, Any]) -> Path:
        """`round-N/<name>.md` for text, `.json` for data; `name` is `<stage>.input` or
        `<stage>.output` (with `.attempt-K` for retried stages)."""
        if isinstance(content, str):
            path = self.round_dir(number) / f"{name}.md"
            atomic_write_text(path, content)
        else:
            path = self.round_dir(number) / f"{name}.json"
            atomic_write_text(path, json.dumps(content, indent=2, ensure_ascii=False) + "\n")
        return path
