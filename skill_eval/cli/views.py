"""How the terminal views (`show`, `compare`) print: rich tables and trees on a terminal,
plain text otherwise (a pipe, a file, CI logs, `--plain`). rich is imported only when used."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

import click


def use_rich(plain: bool) -> bool:
    """rich only for a human at a terminal: not with --plain or TERM=dumb (rich itself honours
    NO_COLOR)."""
    return not plain and sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


def rich_console() -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


def safe(text: Any) -> str:
    """Untrusted text for the terminal: no control characters (no escape sequences), tabs and
    newlines kept."""
    from ..report.text import CONTROL_CHARS

    return CONTROL_CHARS.sub(" ", "" if text is None else str(text)).replace("\r", "")


def markup(text: Any) -> str:
    """Untrusted text inside rich markup: brackets cannot become styles."""
    from rich.markup import escape

    return str(escape(safe(text)))


def echo_lines(lines: Iterable[str]) -> None:
    click.echo("\n".join(lines))
