"""`lint`: static analysis of the Python code blocks in an output with `ruff check`.

The fenced blocks tagged python/py, and the untagged ones that parse as Python and import or
define something (`looks_like_python`), are written to a temporary directory and checked by
ruff in isolated mode (no config files from anywhere), with `--ignore-noqa` (suppression
comments in the output do not count) and a scrubbed environment; nothing is executed.
Rules default to E4, E7, E9 and F (`select` changes them). Score = 1 − min(1, issues / 10).
An output with no Python block is "not applicable": score 1.0, passed, and
`data["lint"]["applicable"]` is false (the composite judge leaves such a part out).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.model import JudgeResult, Task
from ..core.work import Work
from .base import JudgeContext, JudgeSpec
from .json_output import CodeBlock, fenced_blocks

ISSUES_FOR_ZERO = 10
DEFAULT_THRESHOLD = 0.7
DEFAULT_TIMEOUT = 60.0
MAX_BLOCKS = 50
MAX_SHOWN = 10
# Pinned so a score means the same under every ruff version (newer ruffs enable far more rules
# by default): pyflakes and pycodestyle's error subset, ruff's classic default selection.
DEFAULT_SELECT = ("E4", "E7", "E9", "F")
PYTHON_TAGS = frozenset({"python", "py", "python3", "py3"})
_DEFINING = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def looks_like_python(code: str) -> bool:
    """An untagged block counts as Python when it parses as Python (parsed, never run) and
    defines or imports something: shell lines such as `ls -la` or YAML such as `name: x` also
    parse as Python, but never hold an import, a def or a class."""
    try:
        with warnings.catch_warnings():
            # invalid escapes warn at parse time; only these categories are silenced (the
            # filters are process-wide, and other threads' warnings must still show)
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(node, _DEFINING) for node in ast.walk(tree))


def python_blocks(text: str) -> list[CodeBlock]:
    """The blocks lint checks: tagged python/py, or untagged and `looks_like_python`."""
    return [
        b
        for b in fenced_blocks(text)
        if b.lang in PYTHON_TAGS or (not b.lang and looks_like_python(b.code))
    ]


def lint_score(issues: int) -> float:
    return 1.0 - min(1.0, issues / ISSUES_FOR_ZERO)


def find_ruff() -> list[str] | None:
    """argv prefix that runs ruff: the module beside this Python, else `ruff` on PATH."""
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    found = shutil.which("ruff")
    return [found] if found else None


def _env(tmp: str) -> dict[str, str]:
    # ruff needs nothing from the harness: no keys, no config, no user cache.
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": tmp,
        "TMPDIR": tmp,
        "LANG": "C.UTF-8",
        "RUFF_NO_CACHE": "true",
    }


class LintJudge:
    """Run ruff over the output's Python blocks. `ruff` overrides discovery (tests use it)."""

    def __init__(self, config: Mapping[str, Any], ruff: Sequence[str] | None = None) -> None:
        self.select = [str(s) for s in config.get("select") or DEFAULT_SELECT]
        self.pass_threshold = float(config.get("pass_threshold", DEFAULT_THRESHOLD))
        self.timeout = float(config.get("timeout", DEFAULT_TIMEOUT))
        self.ruff = list(ruff) if ruff is not None else None

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        output = work.text
        blocks = python_blocks(output)[:MAX_BLOCKS]
        if not blocks:
            return JudgeResult(
                passed=True,
                score=1.0,
                details="lint: no Python code blocks in the output; not applicable",
                data={"lint": {"applicable": False, "blocks": 0, "issues": 0, "diagnostics": []}},
            )
        ruff = self.ruff if self.ruff is not None else find_ruff()
        if not ruff:
            return JudgeResult.failure(
                "lint: ruff not found (it is a dependency of skill-eval; reinstall the package)"
            )
        with tempfile.TemporaryDirectory(prefix="skill-eval-lint-") as tmp:
            src = Path(tmp) / "src"
            src.mkdir()
            for n, block in enumerate(blocks, 1):
                (src / f"block_{n:02d}.py").write_text(block.code, encoding="utf-8")
            # --ignore-noqa: suppression comments (noqa, file-level noqa, ruff disable) are
            # written by the very output under judgement, so they must not hide its issues
            argv = [
                *ruff,
                "check",
                "--isolated",
                "--no-cache",
                "--exit-zero",
                "--ignore-noqa",
                "--output-format",
                "json",
                "--select",
                ",".join(self.select),
            ]
            try:
                proc = subprocess.run(
                    [*argv, "--", str(src)],
                    cwd=tmp,
                    env=_env(tmp),
                    capture_output=True,
                    text=True,
                    timeout=self.timeout,
                    stdin=subprocess.DEVNULL,
                )
            except FileNotFoundError:
                return JudgeResult.failure(f"lint: ruff not found at {ruff[0]}")
            except subprocess.TimeoutExpired:
                return JudgeResult.failure(
                    f"lint: ruff timed out after {self.timeout:g}s", transient=True
                )
            except OSError as exc:
                return JudgeResult.failure(f"lint: cannot run ruff: {exc}")
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            return JudgeResult.failure(f"lint: ruff exited {proc.returncode}: {tail[0]}")
        try:
            raw = json.loads(proc.stdout or "[]")
        except json.JSONDecodeError:
            return JudgeResult.failure("lint: ruff printed something that is not JSON")
        diagnostics = [_diagnostic(d, blocks) for d in raw if isinstance(d, Mapping)]
        return self._result(diagnostics, len(blocks))

    def _result(self, diagnostics: list[dict[str, Any]], blocks: int) -> JudgeResult:
        score = lint_score(len(diagnostics))
        passed = score >= self.pass_threshold
        head = f"lint: {len(diagnostics)} issue(s) in {blocks} Python block(s); score {score:.2f}"
        shown = [
            f"  block {d['block']} line {d['line']}: {d['code'] or 'syntax'} {d['message']}"
            for d in diagnostics[:MAX_SHOWN]
        ]
        if len(diagnostics) > MAX_SHOWN:
            shown.append(f"  ... and {len(diagnostics) - MAX_SHOWN} more")
        return JudgeResult(
            passed=passed,
            score=score,
            details="\n".join([head, *shown]),
            data={
                "lint": {
                    "applicable": True,
                    "blocks": blocks,
                    "issues": len(diagnostics),
                    "diagnostics": diagnostics,
                }
            },
        )


def _diagnostic(raw: Mapping[str, Any], blocks: Sequence[CodeBlock]) -> dict[str, Any]:
    name = Path(str(raw.get("filename") or "")).name
    match = re.fullmatch(r"block_(\d+)\.py", name)
    block = int(match.group(1)) if match else 0
    loc = raw.get("location") or {}
    row = int(loc.get("row") or 0)
    start = blocks[block - 1].line if 0 < block <= len(blocks) else 0
    return {
        "block": block,
        "line": row,
        "output_line": start + row - 1 if start else None,
        "column": int(loc.get("column") or 0),
        "code": raw.get("code"),
        "message": str(raw.get("message") or ""),
    }


LINT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": {"const": "lint"},
        "select": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "pattern": "^[A-Z]+[0-9]*$"},
            "errorMessage": "must be a non-empty list of ruff rule codes or prefixes "
            "(e.g. [E, F, B])",
        },
        "pass_threshold": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "errorMessage": "must be a number between 0 and 1",
        },
        "timeout": {
            "type": "number",
            "exclusiveMinimum": 0,
            "errorMessage": "must be a number of seconds > 0",
        },
    },
    "patternProperties": {"^x-": {}},
    "additionalProperties": False,
}

LINT_SPEC = JudgeSpec(
    type="lint",
    summary="ruff check over the output's Python code blocks; score 1 − issues/10",
    schema=LINT_SCHEMA,
    build=LintJudge,
    deterministic=True,
)
