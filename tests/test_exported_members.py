"""The public API: sorted, complete, and every name resolves (httpx-style)."""

from __future__ import annotations

import subprocess
import sys

import skill_eval


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert skill_eval.__all__ == sorted(skill_eval.__all__)
    for name in skill_eval.__all__:
        assert getattr(skill_eval, name) is not None, name


def test_every_lazy_export_is_listed() -> None:
    assert set(skill_eval._EXPORTS) | {"__version__"} == set(skill_eval.__all__)


def test_importing_the_package_does_not_import_the_sdk() -> None:
    code = (
        "import sys, skill_eval, skill_eval.inputs.suite, skill_eval.cli;"
        "print('anthropic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_what_plugin_authors_implement_and_catch_is_exported() -> None:
    from skill_eval.errors import ConfigError, RunInterrupted
    from skill_eval.executors.base import Executor, ExecutorBase
    from skill_eval.judges.base import Judge

    exported = (
        skill_eval.RunInterrupted,
        skill_eval.ConfigError,
        skill_eval.ExecutorBase,
        skill_eval.Executor,
        skill_eval.Judge,
    )
    assert exported == (RunInterrupted, ConfigError, ExecutorBase, Executor, Judge)
