"""Python judges used by the tests through `type: python` (suite-author code, not mocks)."""

from __future__ import annotations

from typing import Any


def alpha_or_boom(output: str, task: Any) -> float:
    """1.0 when the output says alpha, 0.0 otherwise; crashes on BOOM (a broken judge)."""
    if "BOOM" in output:
        raise RuntimeError("judge broke on this output")
    return 1.0 if "alpha" in output else 0.0
