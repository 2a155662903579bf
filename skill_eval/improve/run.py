"""`improve(...)`: the library call behind `skill-eval improve`. It loads the suite and the skill,
builds the executor and the judge context, wires the adapter's evaluate_fn/compare_fn and the
SQLite memory, runs the loop, and writes every version, the winner and the ranking artifact.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from ..core.model import Suite
from ..engine.evaluation import EvaluationSettings, default_judge_context
from ..errors import UsageError
from ..executors.base import DEFAULT_EXECUTOR, create_executor, get_executor_spec
from ..executors.mock import check_mock_tasks, keyed_by_arm, load_mock_outputs
from ..inputs.suite import load_suite
from ..jail import JailKind
from ..plan.executor_options import ExecutorTable, check_tables, resolve_options
from ..stats.policy import POLICIES, Policy
from .adapter import make_compare_fn, make_evaluate_fn
from .backends import MOCK as MOCK_IMPROVER
from .backends import build_improver
from .decide import IterationSettings
from .detect import detectable_lines
from .evaluation import CompareFn, EvaluateFn
from .folders import FolderError, read_skill_folder, write_versions, write_winner
from .improver import Improver
from .loop import ImproveResult, run_improve
from .memory import CycleRecord, ImproveMemory, format_history
from .ranking import build_ranking_artifact, candidate_id
from .split import set_apart_to_confirm, split_tasks
from .versions import confirmable

# What a proposed version must show against the original: that it is better (a one-sided
# lower bound above 0), not merely that it is not much worse (run's default, no-regression).
CONFIRM_POLICY: Policy = "superior"


@dataclass(frozen=True)
class ImproveRun:
    """What an improve run left behind: the loop's result, its folder under the state root, the
    ranking artifact, and where the winner went (None: nothing was proposed)."""

    result: ImproveResult
    run_dir: Path
    ranking: Path
    winner: Path | None
    best_candidate: str
    notes: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        """0 when a better version is proposed, or the original is already good enough
        (Accept at the first iteration); 1 when none was shown better at this size."""
        if self.result.proposed:
            return 0
        return 0 if self.result.decision == "Accept" and len(self.result.versions) == 1 else 1


@dataclass(frozen=True)
class EvaluationsExecutor:
    """The executor the versions are scored on, chosen and configured as for `skill-eval
    run`: its name, model, the shorthand `claude_bin`, its own options (`--executor-option
    KEY=VALUE` strings, or a mapping from Python) over its config file table
    (`[tool.skill-eval.executor.NAME]`), and scripted outputs for an executor that takes them.
    `mock_rules`: a test double that can follow the skill's [rule:...] markers does."""

    name: str = DEFAULT_EXECUTOR
    model: str | None = None
    claude_bin: str | None = None
    options: Iterable[str] | Mapping[str, Any] = ()
    tables: Sequence[ExecutorTable] = ()
    mock_outputs: str | None = None
    mock_rules: bool = False


def _executor(chosen: EvaluationsExecutor, task_ids: set[str], jail: JailKind) -> Any:
    """The evaluations' executor, its options resolved and checked as `run` does
    (plan/executor_options.py)."""
    name = chosen.name
    spec = get_executor_spec(name)
    known = {f.name for f in fields(spec.config_cls)}
    check_tables(chosen.tables)
    tables = {t.name: t for t in chosen.tables}
    options, _ = resolve_options(
        name, judge=None, shorthands={}, cli_options=chosen.options, table=tables.get(name)
    )
    values: dict[str, Any] = {"model": chosen.model, "claude_bin": chosen.claude_bin, "jail": jail}
    mock_outputs = chosen.mock_outputs
    if mock_outputs:
        if "mock_outputs" not in known:
            raise UsageError(
                f"--mock-outputs is for an executor with scripted outputs (--mock), not {name!r}"
            )
        outputs = load_mock_outputs(Path(mock_outputs))
        if keyed_by_arm(outputs):  # improve's arms are its versions: the keys would match none
            raise UsageError(
                f"--mock-outputs {mock_outputs}: outputs per arm (candidate/"
                "baseline) do not apply to improve, whose versions it writes "
                "itself; give {task_id: output} (every version gets it) or leave "
                "--mock-outputs out (answers follow [rule:...] markers)"
            )
        check_mock_tasks(Path(mock_outputs), outputs, task_ids)
        values["mock_outputs"] = outputs
    if chosen.mock_rules:
        values["mock_rules"] = True
    supplied = {k: v for k, v in values.items() if k in known and v is not None}
    return create_executor(name, spec.config({**supplied, **options}))


def _protected(suite_path: Path, skill_dir: Path) -> tuple[str, ...]:
    """The suite's path inside the skill folder, when it lives there: the improver may not
    edit the tasks it is scored on."""
    try:
        return (suite_path.resolve().relative_to(skill_dir.resolve()).as_posix(),)
    except ValueError:
        return ()


def improve(
    skill_path: str | Path,
    task_suite: str | Path,
    state_root: str | Path,
    *,
    settings: IterationSettings | None = None,
    executor: str | EvaluationsExecutor = DEFAULT_EXECUTOR,
    improver: str | Improver = MOCK_IMPROVER,
    improver_model: str | None = None,
    base_url: str | None = None,
    claude_bin: str | None = None,
    policy: str | None = None,
    output_dir: str | Path | None = None,
    in_place: bool = False,
    env: Mapping[str, str] | None = None,
    no_jail: bool = False,
    log: Callable[[str], None] | None = None,
) -> ImproveRun:
    """Improve the skill folder at `skill_path` on `task_suite`; see references/improve.md.

    `executor` is the evaluations' executor: a registered name (its defaults), or an
    `EvaluationsExecutor` with its model, options and scripted outputs. Raises UsageError (bad
    input) before anything runs; ExecutorError when a model cannot be reached. The user's
    skill is written only with `in_place`.
    """
    skill_dir, files, skipped, suite = _read_inputs(skill_path, task_suite)
    root = Path(state_root)
    if root.exists() and not root.is_dir():
        raise UsageError(f"--state-root {root}: exists and is not a directory")
    s = settings or IterationSettings()
    jail: JailKind = "none" if no_jail else "auto"
    chosen_executor = (
        executor if isinstance(executor, EvaluationsExecutor) else EvaluationsExecutor(executor)
    )
    runner = _executor(chosen_executor, {t.id for t in suite.tasks}, jail)
    chosen = (
        improver
        if not isinstance(improver, str)
        else build_improver(
            improver,
            model=improver_model,
            base_url=base_url,
            claude_bin=claude_bin,
            env=env,
            jail=jail,
        )
    )
    confirm_policy = _policy(policy)
    evaluate_fn, compare_fn = _judged_by(suite, runner, confirm_policy, s, jail)
    say = log or (lambda line: None)
    if compare_fn is not None:
        _warn_if_unconfirmable(suite, s, confirm_policy, say)
    run_dir = root / "improve" / f"{time.strftime('%Y%m%dT%H%M%S')}-{time.time_ns() % 10**9:09d}"
    run_dir.mkdir(parents=True)
    for note in skipped:
        say(f"[skill] {note}")
    with ImproveMemory.in_state_root(root) as memory:
        result = run_improve(
            files,
            suite.tasks,
            evaluate_fn,
            chosen,
            memory,
            s,
            skill_id=suite.skill_id,
            compare_fn=compare_fn,
            protected=_protected(suite.path, skill_dir),
            log=say,
        )
        cycles = memory.cycles(result.run_id)
    target = skill_dir if in_place else Path(output_dir) if output_dir else run_dir / "improved"
    winner, ranking = _write_run(result, run_dir, skill_dir, target, in_place, suite, cycles)
    notes = tuple(getattr(chosen, "notes", ()))
    return ImproveRun(result, run_dir, ranking, winner, candidate_id(result.best), notes)


def _warn_if_unconfirmable(
    suite: Suite, s: IterationSettings, policy: Policy, say: Callable[[str], None]
) -> None:
    """Before the first iteration: when the tasks set apart to confirm the pick are too few
    for any outcome to pass the policy at its level / the versions compared, say so (every
    version would be refused, whatever it does)."""
    split = set_apart_to_confirm(split_tasks(suite.tasks, s.holdout, s.seed), s.seed)
    family = max(1, s.iterate - 1)
    for line in detectable_lines(len(split.confirm), s.confirm_samples, policy, family, s.holdout):
        say(line)  # what the confirmation can see, before anything runs (improve/detect.py)
    if not confirmable(len(split.confirm), policy, family, s.confirm_samples):
        say(
            f"[confirm] warning: the {len(split.confirm)} task(s) set apart to confirm the pick "
            f"cannot pass policy {policy} at its level / {family} (the versions compared), "
            "even if the pick passes every one and the original none: no version can be "
            "proposed. Give the suite more tasks, or a larger --holdout"
        )


def _read_inputs(
    skill_path: str | Path, task_suite: str | Path
) -> tuple[Path, dict[str, str], list[str], Suite]:
    """The skill folder (its files, and notes on what was skipped) and the suite, checked."""
    skill_dir = Path(skill_path)
    if not skill_dir.is_dir():
        raise UsageError(f"--skill-path {skill_dir}: not a directory holding a SKILL.md")
    try:
        files, skipped = read_skill_folder(skill_dir)
    except FolderError as exc:
        raise UsageError(f"--skill-path {exc}") from None
    suite = load_suite(task_suite)
    if len(suite.tasks) < 2:
        raise UsageError(f"{suite.path}: improve needs at least 2 tasks (train and holdout)")
    return skill_dir, files, skipped, suite


def _policy(name: str | None) -> Policy:
    """The confirmation's policy: `name`, checked, or CONFIRM_POLICY."""
    if name is None:
        return CONFIRM_POLICY
    for policy in POLICIES:
        if policy == name:
            return policy
    raise UsageError(f"--policy must be one of {', '.join(POLICIES)}")


def _judged_by(
    suite: Suite, runner: Any, policy: Policy, s: IterationSettings, jail: JailKind
) -> tuple[EvaluateFn, CompareFn | None]:
    """The loop's evaluate_fn (one attempt a task) and, with a holdout to confirm on, its
    compare_fn (`s.confirm_samples` attempts a task and arm), sharing one judge cache for the
    whole run."""
    eval_settings = EvaluationSettings(policy=policy)
    ctx = default_judge_context(suite, runner.name, jail)
    evaluate_fn = make_evaluate_fn(suite, runner, settings=eval_settings, judge_context=ctx)
    if s.holdout <= 0:
        return evaluate_fn, None
    confirming = replace(eval_settings, samples=s.confirm_samples)
    return evaluate_fn, make_compare_fn(suite, runner, settings=confirming, judge_context=ctx)


def _write_run(
    result: ImproveResult,
    run_dir: Path,
    skill_dir: Path,
    target: Path,
    in_place: bool,
    suite: Suite,
    cycles: list[CycleRecord],
) -> tuple[Path | None, Path]:
    """Every version and the winner written; the ranking artifact and its HTML report. Returns
    where the winner went (None: nothing proposed) and the ranking's path."""
    kept = write_versions(result, run_dir, skill_dir)
    try:
        winner = write_winner(result, target, skill_dir, in_place=in_place)
    except FolderError as exc:
        raise UsageError(f"--output-dir {exc}") from None
    artifact = build_ranking_artifact(
        result,
        run_id=run_dir.name,
        # The kept copy of the original: inside the ranking's
        # directory, so `run --input` accepts it as the baseline.
        target_path=str(kept[result.original.hash] / "SKILL.md"),
        skill_name=suite.skill_id,
        cycles=cycles,
    )
    ranking = run_dir / "ranking.json"
    ranking.write_text(json.dumps(artifact, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    from ..report.improve_html import render_improve_html  # jinja2 only when improving

    (run_dir / "report.html").write_text(render_improve_html(artifact), encoding="utf-8")
    return winner, ranking


def history(state_root: str | Path, skill_id: str | None = None) -> str:
    """The memory's runs and cycles as text (`skill-eval improve --history`)."""
    path = Path(state_root)
    if not path.is_dir():
        raise UsageError(f"--state-root {path}: no such directory")
    with ImproveMemory.in_state_root(path) as memory:
        return format_history(memory.history(skill_id)) or "no improve runs recorded"
