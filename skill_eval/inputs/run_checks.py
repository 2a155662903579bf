"""Checks `run` makes before its first model call, besides loading the suite: the ones
`skill-eval validate` makes on what the suite points at (a fixture or judge module that does
not compile stops the run at `file:line`, not after every attempt is paid for), the judge
checks (a deterministic judge that fails its task's reference stops it too; one that passes
on an empty output is a warning: judge_checks.py), and warnings for judges that cannot tell
the arms apart in this run's configuration."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..core.model import Suite, Task
from ..errors import SuiteError
from ..jail import JailUnavailable
from ..jail.providers import isolated, require
from ..judges.base import build_judge
from .judge_checks import CODE_JUDGES, check_judges, locate
from .source_checks import judge_types, python_problems
from .suite import SUITE_FILE_NAME


def check_suite(suite: Suite, given: str, jail: str = "auto") -> list[str]:
    """Build every task's judge (a config no judge accepts raises), then raise SuiteError
    listing every Python file under the suite's fixtures/ and every python judge module that
    does not compile, as `validate` reports them (`given`: the suite path as the user wrote
    it, a file or its directory); then check the deterministic judges as `validate` does:
    SuiteError for every error, and the warnings returned, one line each (with those of the
    eval set the suite was read from). The judges' code runs in the run's jail (`jail`:
    `none` with --no-jail)."""
    for task in suite.tasks:
        build_judge(task.judge)
    shown = os.path.join(given, SUITE_FILE_NAME) if os.path.isdir(given) else given
    problems = python_problems(suite, shown)
    if problems:
        raise SuiteError(
            f"{shown}: Python files that do not compile", path=shown, problems=problems
        )
    _jail_for_code(suite, shown, jail)
    checks = check_judges(suite, shown, jail=jail)
    if checks.errors:
        raise SuiteError(
            f"{shown}: judges that fail their checks", path=shown, problems=checks.errors
        )
    # an eval set's own: its skill's files given to the baseline, a skill name not the folder's
    source = list(suite.source.warnings) if suite.source is not None else []
    return [str(problem) for problem in checks.warnings] + source


def _jail_for_code(suite: Suite, shown: str, jail: str) -> None:
    """A judge that runs the suite's code (pytest, python) runs only in a jail, under --mock
    too: where none can run here the run stops now, naming the first such task, once (its
    preflight would stop it after a warning saying the same)."""
    coded = [t for t in suite.tasks if set(judge_types(t.judge)) & CODE_JUDGES]
    if not coded or not isolated(jail):
        return
    try:
        require(jail)
    except JailUnavailable as exc:
        where = locate(Path(suite.path), shown, [(coded[0], "judge", "")])[0]
        kinds = " and ".join(sorted(set(judge_types(coded[0].judge)) & CODE_JUDGES))
        more = f" (and {len(coded) - 1} more task(s))" if len(coded) > 1 else ""
        said = f"its {kinds} judge runs code, only in a jail{more}: {exc.why}"
        raise JailUnavailable(str(replace(where, message=said)), way_out=exc.way_out) from None


def skill_use_warnings(
    tasks: Sequence[Task], executor_name: str, can_act: bool, skill_mode: str
) -> list[str]:
    """One warning per task whose `skill-used` judge can only give one answer here: the skill
    goes to the model as text (`--skill-mode system|prepend`), or the executor has no tools,
    so no arm can invoke it. A task whose kind installs the skill (ExecutionSettings) is judged
    by its own mode."""
    warnings = []
    for task in tasks:
        if "skill-used" not in set(judge_types(task.judge)):
            continue
        mode = task.execution_settings().skill_mode or skill_mode
        if not can_act:
            why = f"the {executor_name!r} executor has no tools to invoke a skill with"
        elif mode != "installed":
            why = f"--skill-mode {mode} sends SKILL.md as text, not as a skill to invoke"
        else:
            continue
        warnings.append(
            f"task {task.id!r}: its skill-used judge cannot see the skill used "
            f"in this run: {why} (use --executor claude-cli --skill-mode "
            "installed)"
        )
    return warnings
