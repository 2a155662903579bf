"""Importing this module registers every built-in executor."""

from . import anthropic_api, mock  # noqa: F401
