"""Importing this module registers every built-in executor."""

from . import anthropic_api, claude_cli, mock  # noqa: F401
