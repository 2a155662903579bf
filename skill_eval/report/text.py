"""How values read as one line of a report: text from a model or a judge without control,
bidirectional or line-breaking characters (`one_line`), and a number as short as it is exact
(`number_text`). Every report module, and the CLI's views, show untrusted text through these."""

from __future__ import annotations

import re
from typing import Any

from .junit import BIDI_CHARS

# C0/C1 controls except tab, newline and carriage return (whitespace, handled apart), and
# the bidirectional controls that reorder what a reader sees (report_junit.BIDI_CHARS)
CONTROL_CHARS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff" + BIDI_CHARS + "]"
)
_SPACE = re.compile(r"\s+")


def one_line(text: Any, limit: int | None = None) -> str:
    """Text safe for one terminal or table line: no control characters, no newlines."""
    clean = _SPACE.sub(" ", CONTROL_CHARS.sub(" ", "" if text is None else str(text))).strip()
    return clean if limit is None or len(clean) <= limit else clean[: limit - 3] + "..."


def number_text(value: Any) -> str:
    if value is None:
        return "n/a"
    text = f"{float(value):.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


__all__ = ["CONTROL_CHARS", "number_text", "one_line"]
