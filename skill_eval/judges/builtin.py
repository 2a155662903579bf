"""Importing this module registers every built-in judge, exactly as a plugin would.
One import per line, so adding a judge module is a one-line change."""
# ruff: noqa: I001

from . import contains  # noqa: F401
from . import simple  # noqa: F401
from . import combinators  # noqa: F401
from . import python_judge  # noqa: F401
from . import pytest_judge  # noqa: F401
from . import llm_rubric  # noqa: F401
from . import composite, lint, rubric  # noqa: F401
