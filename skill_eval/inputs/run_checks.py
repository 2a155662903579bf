"""Checks `run` makes before its first model call, besides loading the suite: the ones
`skill-eval validate` makes on what the suite points at (a fixture or judge module that does
not compile stops the run at `file:line`, not after every attempt is paid for), the judge
checks (a deterministic judge that fails its task's reference stops it too; one that passes
on an empty output is a warning: judge_checks.py), and warnings for judges that cannot tell
the arms apart in this run's configuration."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..core.model import Suite, Task
from ..errors import SuiteError
from ..judges.base import build_judge
from .judge_checks import check_judges
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
    checks = check_judges(suite, shown, jail=jail)
    if checks.errors:
        raise SuiteError(
            f"{shown}: judges that fail their checks", path=shown, problems=checks.errors
        )
    # an eval set's own: its skill's files given to the baseline, a skill name not the folder's
    source = list(suite.source.warnings) if suite.source is not None else []
    return [str(problem) for problem in checks.warnings] + source


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
