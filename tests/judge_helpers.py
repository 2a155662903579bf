"""Python judges used by the tests through `type: python` (suite-author code, not mocks)."""

from __future__ import annotations

from typing import Any


def alpha_or_boom(output: str, task: Any) -> float:
    """1.0 when the output says alpha, 0.0 otherwise; crashes on BOOM (a broken judge)."""
    if "BOOM" in output:
        raise RuntimeError("judge broke on this output")
    return 1.0 if "alpha" in output else 0.0


def exits(output: str, task: Any) -> float:
    """Calls sys.exit(0) on EXIT: a judge (or the code it imports) that ends the process."""
    if "EXIT" in output:
        raise SystemExit(0)
    return 1.0 if "alpha" in output else 0.0


def says_false(output: str, task: Any) -> dict[str, Any]:
    """`passed` as the string "false": truthy, and not a verdict."""
    return {"passed": "false", "details": "looked at it"}
