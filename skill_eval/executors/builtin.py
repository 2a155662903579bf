"""Importing this module registers every built-in executor."""

from . import mock  # noqa: F401
