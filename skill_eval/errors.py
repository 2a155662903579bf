"""The exceptions skill-eval raises: one tree, every class a SkillEvalError.

    SkillEvalError            anything the harness reports as a one-line error
     ├── UsageError           bad flags or flag combinations
     │    ├── MockOutputsError  (executors.mock_outputs) a --mock-outputs file gone wrong
     │    ├── ToolPlanError     (executors.claude.tools) a task's tools this run cannot confine
     │    └── JournalError      a journal whose records the harness did not write (bad MAC)
     ├── ProblemsError        a file with located problems, all reported (one line each)
     │    ├── SuiteError      a task suite that is missing, unreadable or invalid
     │    ├── ConfigError     a project config file (pyproject.toml, skill-eval.toml) gone wrong
     │    └── YamlError       (core.safeyaml) YAML that is unreadable, unsafe or malformed
     ├── SkillError           a skill or ranking artifact that cannot be resolved
     │    ├── EvaluatorError  (evaluators.loader) an evaluator skill that cannot load
     │    ├── FrontmatterNotClosed (evaluators.loader) a `---` frontmatter with no closing line
     │    └── FolderError     (improve.folders) a skill folder that cannot be read or written
     ├── ExecutorError        an executor that cannot start (missing binary, missing key)
     │    ├── RunStopped      an attempt showed no attempt can succeed (401/403, unknown model)
     │    ├── JailUnavailable (jail) no jail can run here, and --no-jail was not given
     │    ├── JailBroken     (jail.ended) one run's jail misbehaved: that attempt is an error
     │    ├── JailedCallError (judges.python_jail) a python judge's jail gave no answer
     │    └── TextModelError  (executors.text_model) a model service that gave no usable reply
     ├── JudgeError           a judge configuration that cannot be built
     ├── CacheError           a cache directory that cannot be used
     │    └── UnsafeCacheEntry (core.jsondisk) a cache entry refused (pickle, outside the cache)
     ├── ArtifactError        an artifact that cannot be read or does not match its schema
     ├── OutputRejected       output of a model or a candidate refused (caught where raised)
     │    ├── ReplyError      (evaluators.scoring) an evaluator's reply that cannot be scored
     │    ├── ProposalError   (improve.improver) an improver's proposal that cannot be applied
     │    ├── NonFiniteNumber (judges.json_output) JSON output holding NaN, Infinity or 1e999
     │    ├── TooLarge        (jail.api_body) a jail's request body over the forward's cap
     │    ├── OverHeld        (jail.api_body) a body past what one jail may hold at once
     │    ├── BadFraming      (jail.api_body) a jail's request body whose framing cannot be read
     │    └── ClientGone      (jail.api_body) a jail that hung up or went silent mid-request
     ├── FileTooLarge         (core.bounded) a file over what the harness reads of one
     ├── NotUtf8              (core.utf8) a text file that is not UTF-8 (its reader names it)
     ├── ReviewError          (review.stages) a review stage that never gave a usable reply
     ├── RunAborted           code inside a run (a plugin) raised SystemExit: no artifact
     ├── BudgetExhausted      --max-cost-usd / --max-tokens-total refused or stopped a run
     └── RunInterrupted       Ctrl-C or SIGTERM during a run: what finished is saved

Also ValueError (they were ValueErrors before the tree, and callers catch them as such):
YamlError, ToolPlanError, FrontmatterNotClosed, FolderError, UnsafeCacheEntry, NotUtf8 and every
OutputRejected. Each class carries its exit code (`exit_code`): 2 bad input, the default;
3 a harness fault (ExecutorError, ReviewError, RunAborted); 5 BudgetExhausted; 130
RunInterrupted. The command
line catches once, at the top (cli/common.py), and exits with it; references/errors.md says
what each means.
OutputRejected never reaches the CLI: it becomes data (a failed judgement, an empty proposal).
Context travels as attributes (`path`, `task_id`, `field`), never parsed back out of messages.
Failures of a single attempt are not exceptions: they are data on the attempt (status "error").
`tests/test_error_tree.py` checks that every exception class of the package is drawn here.
"""

from __future__ import annotations

from dataclasses import dataclass


class SkillEvalError(Exception):
    """Base class: a problem the user can fix, reported as `Error: <message>`."""

    exit_code: int = 2  # the command line's exit code for it: bad input, fix it and rerun

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def __str__(self) -> str:
        return self.message


class UsageError(SkillEvalError):
    """Flags that do not make sense together, or a bad flag value."""


class JournalError(UsageError):
    """A run journal that `--resume`, `merge` or `rejudge` cannot trust: a record whose MAC
    fails (edited, inserted, moved or copied from another journal), an attempt recorded twice,
    a journal from before MACs, or a journal key that cannot be read. The message names the
    file and line."""


@dataclass(frozen=True)
class Problem:
    """One validation problem in a file, located as precisely as we can."""

    path: str
    message: str
    line: int | None = None
    field: str = ""
    task_index: int | None = None
    task_id: str | None = None

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        loc = ""
        if self.task_index is not None:
            loc = f"tasks[{self.task_index}]"
            if self.task_id is not None:
                loc += f' (id "{self.task_id}")'
        if self.field:
            loc = f"{loc}.{self.field}" if loc else self.field
        return f"{where}: {loc}: {self.message}" if loc else f"{where}: {self.message}"


class ProblemsError(SkillEvalError):
    """An error made of located problems, every one reported (one line each)."""

    def __init__(
        self, message: str, *, path: str | None = None, problems: list[Problem] | None = None
    ) -> None:
        super().__init__(message, path=path)
        self.problems = problems or []

    def __str__(self) -> str:
        if not self.problems:
            return self.message
        return "\n".join(str(p) for p in self.problems)


class SuiteError(ProblemsError):
    """A task suite that is missing or invalid. `problems` lists every problem found."""


class ConfigError(ProblemsError):
    """A project config file that cannot be read, is not TOML, or has unknown keys or values
    of the wrong type. `problems` locates each by file, line and key."""


class SkillError(SkillEvalError):
    """A SKILL.md, ranking artifact or execution plan that cannot be resolved."""


class ExecutorError(SkillEvalError):
    """An executor that cannot run at all (prerequisites missing, bad configuration)."""

    exit_code = 3  # a harness fault, not bad input


class RunStopped(ExecutorError):
    """An executor answered in a way no retry can fix (bad credentials, unknown model): the run
    stopped at that first attempt. Attempts finished so far are in the journal of `run_dir`."""

    def __init__(self, cause: str, run_dir: str) -> None:
        super().__init__(
            f"run stopped: {cause} (every attempt would fail the same way; "
            f"finished attempts are kept in {run_dir})",
            path=run_dir,
        )
        self.cause = cause
        self.run_dir = run_dir


class JudgeError(SkillEvalError):
    """A judge that cannot be built from its configuration."""


class CacheError(SkillEvalError):
    """A cache directory that cannot be created or opened."""


class ArtifactError(SkillEvalError):
    """An artifact that cannot be read, or that does not match its JSON Schema."""


class OutputRejected(SkillEvalError, ValueError):
    """Output of a model or a candidate that is refused (an unscorable reply, an unsafe
    proposal, a non-finite number). Caught where it is raised: it becomes data, never an exit."""


class RunAborted(SkillEvalError):
    """Code run inside a run (a plugin's judge or executor) raised SystemExit: the run ended
    before it wrote an artifact, and exit 0 would say it succeeded."""

    exit_code = 3


class BudgetExhausted(SkillEvalError):
    """A run's cap (--max-cost-usd, --max-tokens-total) was below its estimate, so it never
    started (`run_dir` None), or was reached while it ran: no new attempt started, the finished
    ones are kept in `run_dir` and `--resume` with a higher cap completes the run. Never a
    pass: its own exit code, for CI to tell a budget apart from a verdict."""

    exit_code = 5

    def __init__(self, message: str, run_dir: str | None = None) -> None:
        super().__init__(message, path=run_dir)
        self.run_dir = run_dir


class RunInterrupted(SkillEvalError):
    """The run was stopped by the user; finished attempts are in the journal of `run_dir`."""

    exit_code = 130

    def __init__(self, run_dir: str, finished: int) -> None:
        super().__init__(
            f"interrupted: {finished} finished attempts are saved in {run_dir}; "
            f"continue with --resume {run_dir}",
            path=run_dir,
        )
        self.run_dir = run_dir
        self.finished = finished
