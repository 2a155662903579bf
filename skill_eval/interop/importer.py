"""`skill-eval import`: an eval set (any shape inputs/evalsets/ reads) and a trigger set
written as a task suite file, with the evals' input files copied beside it.

The suite is the one `run --task-suite EVALS.json` and `run SKILL_DIR` read in memory
(inputs/evalsets/tasks.py maps evals to tasks: the judges, observers, ids and files); import
only writes it: the YAML, each input file copied into the suite folder at the same relative
path (contained: files.py), then the written suite loaded back, any problem it has in
`ImportResult.problems`. Everything with no place in the suite is in `ImportResult.dropped`.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ..core.bounded import mib
from ..core.model import Suite
from ..core.paths import atomic_write_text
from ..core.safeyaml import MAX_BYTES
from ..errors import SuiteError, UsageError
from ..inputs.evalsets.folder import read_eval_file
from ..inputs.evalsets.load import suite_of
from ..inputs.evalsets.record import render_suite
from ..inputs.evalsets.records import EvalsFile, default_files_root
from ..inputs.evalsets.tasks import DERIVED_KEY as DERIVED_KEY
from ..inputs.evalsets.triggers import TriggerSet
from ..inputs.suite import SUITE_FILE_NAME, load_suite
from .files import Copy, copy_all, plan_copies, writing

SOURCE_FORMAT = "skill-creator evals.json"
# What the printed run command leaves to the user: the skill folder when import found none,
# and for trigger tasks another version of the skill to compare with.
SKILL_PLACEHOLDER = "SKILL_DIR"
BASELINE_PLACEHOLDER = "OTHER_VERSION"
STATE_ROOT = ".skill-eval"


@dataclass(frozen=True)
class ImportResult:
    suite_path: Path
    tasks: int
    trigger_tasks: int
    files_copied: int
    dropped: list[str] = field(default_factory=list)  # what was not carried over
    problems: list[str] = field(default_factory=list)  # the written suite's, if any
    run_command: str = ""  # the `skill-eval run` that runs the suite (see run_command)
    run_notes: list[str] = field(default_factory=list)  # what to fill in, and why
    warnings: list[str] = field(default_factory=list)  # what a run would warn of


def suite_output_path(output: str | os.PathLike[str]) -> Path:
    """`-o` as a suite file: a folder (existing, or written with a trailing slash) means
    `<folder>/task_suite.yaml`."""
    text = os.fspath(output)
    path = Path(text)
    if path.is_dir() or text.endswith(("/", os.sep)):
        return path / SUITE_FILE_NAME
    return path


def _shown(path: Path) -> str:
    """A path for a command line: relative to the working directory when below it."""
    text = os.path.relpath(path) if path.is_absolute() else os.fspath(path)
    return shlex.quote(os.fspath(path.resolve()) if text.startswith("..") else text)


def run_command(
    suite_path: Path, skill_dir: Path | None, trigger_tasks: int
) -> tuple[str, list[str]]:
    """The `skill-eval run` command that runs what import wrote, and a line for each part the
    user fills in. Trigger tasks need a baseline that can trigger (another version of the
    skill: --baseline-skill); the no-skill baseline, the default, never triggers."""
    skill = _shown(skill_dir) if skill_dir is not None else SKILL_PLACEHOLDER
    parts = [
        "skill-eval",
        "run",
        "--task-suite",
        _shown(suite_path),
        "--standalone",
        "--skill-path",
        skill,
    ]
    notes = []
    if skill_dir is None:
        notes.append(f"{SKILL_PLACEHOLDER}: the skill's folder (the one holding SKILL.md)")
    if trigger_tasks:
        parts += ["--baseline-skill", BASELINE_PLACEHOLDER]
        notes.append(
            f"{BASELINE_PLACEHOLDER}: another version of the skill to compare with "
            "(say a copy made before you edit its description): trigger tasks "
            "compare two descriptions, and a no-skill baseline never triggers; "
            f"--no-baseline in its place measures {skill} alone"
        )
    return " ".join([*parts, "--state-root", STATE_ROOT]), notes


def _read(
    evals_json: str | os.PathLike[str] | None,
    trigger_set: str | os.PathLike[str] | None,
    files_root: str | os.PathLike[str] | None,
) -> Suite:
    """The suite the eval sets make, in memory (the evals file may hold a trigger set)."""
    evals_path = Path(evals_json) if evals_json is not None else None
    trigger_path = Path(trigger_set) if trigger_set is not None else None
    first = evals_path or trigger_path
    if first is None:
        raise UsageError("import: give an eval set, a trigger set, or both")
    evals: EvalsFile | None = None
    triggers: TriggerSet | None = None
    if evals_path is not None:
        read = read_eval_file(evals_path)
        evals = read if isinstance(read, EvalsFile) else None
        triggers = read if isinstance(read, TriggerSet) else None
    root = Path(files_root) if files_root is not None else None
    return suite_of(
        evals_path if evals is not None else None,
        trigger_path or (evals_path if triggers is not None else None),
        first,
        (),
        evals=evals,
        triggers=triggers,
        files_root_given=root,
    )


def import_evals(
    evals_json: str | os.PathLike[str] | None,
    output: str | os.PathLike[str],
    *,
    trigger_set: str | os.PathLike[str] | None = None,
    files_root: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> ImportResult:
    """Write the suite for `evals_json` and/or `trigger_set` at `output`, its input files
    beside it. Refuses an existing output (or a different existing input file) unless
    `force`. Raises SuiteError (one line naming file, eval and field) on bad input."""
    suite = _read(evals_json, trigger_set, files_root)
    source = suite.source
    if source is None:  # never: a suite read from eval sets says what it was read from
        raise UsageError(f"{suite.path}: not an eval set")
    suite_path = suite_output_path(output)
    if os.path.lexists(suite_path) and not force:
        raise UsageError(
            f"{suite_path}: already exists (use --force to overwrite)", path=str(suite_path)
        )
    if suite_path.is_symlink() or (suite_path.exists() and not suite_path.is_file()):
        raise UsageError(f"{suite_path}: exists and is not a regular file", path=str(suite_path))
    suite_dir = suite_path.resolve().parent
    header = (
        f"Imported by `skill-eval import` from {' and '.join(map(str, source.files))}"
        + "\nJudges of type `expectations` grade each statement with a model."
    )
    text = render_suite(source.data, header)
    if len(text.encode("utf-8")) > MAX_BYTES:
        raise UsageError(
            f"{suite_path}: the suite would be {len(text.encode('utf-8')):,} bytes, over the "
            f"{mib(MAX_BYTES)} a suite file may hold; run the eval set as it is instead "
            f"(run --task-suite {source.files[0]})",
            path=str(suite_path),
        )
    plan = _copies(suite, suite_dir, force)
    with writing():
        suite_dir.mkdir(parents=True, exist_ok=True)
        copied = copy_all(plan)
        atomic_write_text(suite_path, text)
    problems: list[str] = []
    try:
        load_suite(suite_path)
    except SuiteError as exc:
        problems = [str(p) for p in exc.problems] or [str(exc)]
    trigger_tasks = sum(t.is_trigger_task for t in suite.tasks)
    root = default_files_root(source.files[0])
    skill_root = root if (root / "SKILL.md").is_file() else None
    command, notes = run_command(suite_path, skill_root, trigger_tasks)
    return ImportResult(
        suite_path=suite_path,
        tasks=len(suite.tasks) - trigger_tasks,
        trigger_tasks=trigger_tasks,
        files_copied=copied,
        dropped=list(source.not_carried_over),
        problems=problems,
        run_command=command,
        run_notes=notes,
        warnings=list(source.warnings),
    )


def _copies(suite: Suite, suite_dir: Path, force: bool) -> list[Copy]:
    """The input files to copy, from the suite's files root, at their relative paths."""
    origins = suite.source.origins if suite.source else ()
    entries = [
        (f"{origins[i] if i < len(origins) else f'tasks[{i}]'}.files[{j}]", value)
        for i, task in enumerate(suite.tasks)
        for j, value in enumerate(task.files)
    ]
    if not entries:
        return []
    listed_in = suite.source.files[0] if suite.source else suite.path
    return plan_copies(entries, suite.directory, suite_dir, source=listed_in, force=force)
