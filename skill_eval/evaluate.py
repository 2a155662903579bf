"""`run_evaluation`: the one function behind `skill-eval run` and `scripts/evaluate.py`.

Load the suite, resolve the arms, run every task with each arm, judge, decide the verdict
and write the artifact. Suite and configuration errors stop the run before any model call.
"""

from __future__ import annotations

import json
import secrets
import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from . import artifact as artifact_mod
from .analysis import POLICIES, analyse
from .cache import BaselineCache, baseline_key, parse_duration
from .errors import CacheError, JudgeError, RunInterrupted, UsageError
from .executors.base import (
    PROMPT_TEMPLATE_VERSION,
    SKILL_MODES,
    ExecutorConfig,
    create_executor,
)
from .executors.mock import load_mock_outputs
from .judges.base import JudgeContext, build_judge
from .judges.judge_cache import JudgeCache
from .judges.rubric import preflight_evaluators
from .model import Arm, Attempt, Skill
from .paths import safe_component
from .progress import Progress
from .results import arm_results, pass_rate
from .rundir import open_run_dir
from .runner import JOURNAL_NAME, Journal, Runner, RunSettings, attempts_by, plan_jobs
from .skills import load_ranking, load_skill, resolve_candidate, resolve_original
from .suite import load_suite
from .verdict import RunHealth, Verdict, decide, skip_verdict

JUDGE_BACKENDS = ("anthropic", "claude-cli", "mock")


@dataclass(frozen=True)
class RunOptions:
    """Parameters of one evaluation; they mirror the flags of `skill-eval run`."""

    task_suite: str
    state_root: str
    input: str | None = None
    candidate_id: str | None = None
    standalone: bool = False
    skill_path: str | None = None
    baseline_skill: str | None = None
    no_baseline: bool = False
    pass_k: int = 1
    samples: int | None = None
    eval_threshold: float = 1.0
    min_pass_rate: float = 0.5
    mock: bool = False
    executor: str | None = None
    mock_outputs: str | None = None
    skill_mode: str = "system"
    model: str | None = None
    max_tokens: int = 4096
    temperature: float | None = None
    claude_bin: str | None = None
    max_turns: int | None = None
    allowed_tools: tuple[str, ...] = ()
    price_file: str | None = None
    concurrency: int = 8
    max_retries: int = 5
    max_error_rate: float = 0.1
    policy: str = "delta"
    min_delta: float = 0.0
    margin: float = 0.05
    resume: str | None = None  # a run directory, or "" for the latest run with these inputs
    output: str | None = None
    baseline_cache_dir: str | None = None
    baseline_ttl: str = "7d"
    judge_executor: str | None = None
    judge_model: str | None = None
    judge_cache_dir: str | None = None
    no_judge_cache: bool = False
    evaluators_dirs: tuple[str, ...] = ()
    progress: bool = True

    @property
    def executor_name(self) -> str:
        return self.executor or ("mock" if self.mock else "claude-cli")

    @property
    def sample_count(self) -> int:
        return self.samples if self.samples is not None else self.pass_k


@dataclass(frozen=True)
class EvaluationOutcome:
    artifact: dict[str, Any]
    path: Path
    run_dir: Path | None
    messages: tuple[str, ...] = field(default_factory=tuple)

    @property
    def verdict(self) -> str:
        return str(self.artifact["evaluation"]["verdict"])


def check_options(opts: RunOptions) -> None:
    """Flag combinations that cannot work: a UsageError before anything else happens."""
    if opts.standalone:
        if opts.input or opts.candidate_id:
            raise UsageError("--standalone cannot be combined with --input/--candidate-id")
        if not opts.skill_path:
            raise UsageError("--standalone needs --skill-path (a SKILL.md or its directory)")
        if opts.baseline_skill and opts.no_baseline:
            raise UsageError("--baseline-skill and --no-baseline exclude each other")
    else:
        if not opts.input or not opts.candidate_id:
            raise UsageError("pipeline mode needs --input RANKING and --candidate-id ID "
                             "(or use --standalone --skill-path PATH)")
        if opts.skill_path or opts.baseline_skill or opts.no_baseline:
            raise UsageError("--skill-path, --baseline-skill and --no-baseline are for "
                             "--standalone mode")
    if opts.pass_k < 1:
        raise UsageError(f"--pass-k must be at least 1, got {opts.pass_k}")
    if opts.samples is not None and opts.samples < opts.pass_k:
        raise UsageError(f"--samples ({opts.samples}) must be at least --pass-k ({opts.pass_k})")
    if opts.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {opts.concurrency}")
    if opts.max_retries < 0:
        raise UsageError(f"--max-retries must be 0 or more, got {opts.max_retries}")
    for name, value in (("--max-error-rate", opts.max_error_rate),
                        ("--min-pass-rate", opts.min_pass_rate)):
        if not 0.0 <= value <= 1.0:
            raise UsageError(f"{name} must be between 0 and 1, got {value}")
    if opts.policy not in POLICIES:
        raise UsageError(f"--policy must be one of {', '.join(POLICIES)}")
    if not 0.0 <= opts.margin < 1.0:
        raise UsageError(f"--margin must be in [0, 1), got {opts.margin}")
    if opts.skill_mode not in SKILL_MODES:
        raise UsageError(f"--skill-mode must be one of {', '.join(SKILL_MODES)}")
    if opts.judge_executor and opts.judge_executor not in JUDGE_BACKENDS:
        raise UsageError(f"--judge-executor must be one of {', '.join(JUDGE_BACKENDS)}")
    if opts.mock and opts.executor not in (None, "mock"):
        raise UsageError("--mock means --executor mock; drop one of them")


@dataclass(frozen=True)
class Arms:
    candidate: Arm
    baseline: Arm | None
    baseline_kind: str  # original | skill | none | absent
    candidate_id: str
    candidate_score: float | None
    run_id: str
    ranking: Any = None
    warnings: tuple[str, ...] = ()


def _skill_dict(skill: Skill | None) -> dict[str, Any] | None:
    if skill is None:
        return None
    return {"name": skill.name, "content": skill.content, "origin": skill.origin,
            "directory": str(skill.directory) if skill.directory else None}


def _skill_from(data: dict[str, Any] | None) -> Skill | None:
    if data is None:
        return None
    return Skill(data["name"], data["content"],
                 Path(data["directory"]) if data.get("directory") else None,
                 data.get("origin", ""))


def arms_to_dict(arms: Arms) -> dict[str, Any]:
    """What run.json keeps of the arms, so a run can be re-judged without re-resolving."""
    ranking = arms.ranking
    return {
        "candidate": {"label": arms.candidate.label, "skill": _skill_dict(arms.candidate.skill)},
        "baseline": None if arms.baseline is None else {
            "label": arms.baseline.label, "skill": _skill_dict(arms.baseline.skill)},
        "baseline_kind": arms.baseline_kind, "candidate_id": arms.candidate_id,
        "candidate_score": arms.candidate_score, "run_id": arms.run_id,
        "ranking": None if ranking is None else {
            "path": str(ranking.path), "lane": ranking.lane, "target": ranking.target},
        "warnings": list(arms.warnings),
    }


def arms_from_dict(data: dict[str, Any]) -> Arms:
    base = data.get("baseline")
    ranking = data.get("ranking")
    return Arms(
        Arm("candidate", _skill_from(data["candidate"]["skill"]), data["candidate"]["label"]),
        None if base is None else Arm("baseline", _skill_from(base["skill"]), base["label"]),
        data["baseline_kind"], data["candidate_id"], data.get("candidate_score"),
        data["run_id"],
        None if ranking is None else SimpleNamespace(path=Path(ranking["path"]),
                                                     lane=ranking.get("lane"),
                                                     target=ranking.get("target")),
        tuple(data.get("warnings") or ()))


def resolve_arms(opts: RunOptions, work_dir: Path, run_id: str) -> Arms:
    if opts.standalone:
        assert opts.skill_path is not None  # check_options guarantees it
        candidate = Arm("candidate", load_skill(opts.skill_path), "candidate skill")
        if opts.no_baseline:
            return Arms(candidate, None, "absent", "standalone", None, run_id)
        if opts.baseline_skill:
            base = Arm("baseline", load_skill(opts.baseline_skill), "baseline skill")
            return Arms(candidate, base, "skill", "standalone", None, run_id)
        return Arms(candidate, Arm("baseline", None, "no skill"), "none", "standalone",
                    None, run_id)
    assert opts.input is not None and opts.candidate_id is not None
    ranking = load_ranking(opts.input)
    original = resolve_original(ranking)
    resolved = resolve_candidate(ranking, opts.candidate_id, work_dir)
    return Arms(Arm("candidate", resolved.skill, f"candidate {opts.candidate_id}"),
                Arm("baseline", original, "original skill"), "original", opts.candidate_id,
                resolved.score, ranking.run_id, ranking, tuple(resolved.warnings))


def new_run_id() -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"standalone-{stamp}-{secrets.token_hex(3)}"


def _fingerprint(opts: RunOptions, suite_sha: str, arms: Arms, executor: dict[str, Any]) -> str:
    from .model import sha256_text

    return sha256_text(json.dumps({
        "suite": suite_sha, "candidate": arms.candidate.skill_sha256,
        "baseline": arms.baseline.skill_sha256 if arms.baseline else "absent",
        "executor": executor, "pass_k": opts.pass_k, "samples": opts.sample_count,
        "skill_mode": opts.skill_mode,
    }, sort_keys=True, default=str))


def run_evaluation(opts: RunOptions, log: Callable[[str], None] | None = None) \
        -> EvaluationOutcome:
    """Run one evaluation end to end and write its artifact."""
    log = log or (lambda message: print(message, file=sys.stderr))
    check_options(opts)
    started_at = datetime.now(UTC)
    suite = load_suite(opts.task_suite)
    judges = {task.id: build_judge(task.judge) for task in suite.tasks}
    state_root = Path(opts.state_root).resolve()
    state_root.mkdir(parents=True, exist_ok=True)
    mock_outputs = load_mock_outputs(Path(opts.mock_outputs)) if opts.mock_outputs else None
    executor_name = opts.executor_name
    config = ExecutorConfig(
        skill_mode=opts.skill_mode,  # type: ignore[arg-type]
        model=opts.model, max_tokens=opts.max_tokens, temperature=opts.temperature,
        mock_outputs=mock_outputs, claude_bin=opts.claude_bin, max_turns=opts.max_turns,
        allowed_tools=opts.allowed_tools,
        price_file=Path(opts.price_file) if opts.price_file else None)
    executor = create_executor(executor_name, config)
    describe = getattr(executor, "describe", lambda: {"kind": executor_name})()

    # Candidate skills resolved from a ranking are copied under <state-root>/skills/.
    arms = resolve_arms(opts, state_root / "skills", new_run_id() if opts.standalone else "")
    skip = skip_verdict(arms.candidate_score, None if opts.standalone else opts.eval_threshold)
    if skip is not None:
        return finish_evaluation(opts, suite, arms, state_root, None, [], skip, started_at,
                                 describe, log=log)
    if executor_name != "mock":
        getattr(executor, "preflight", lambda: None)()
    evaluator_problems = preflight_evaluators(suite.tasks, opts.evaluators_dirs, Path.cwd())
    if evaluator_problems:
        raise JudgeError("\n".join(evaluator_problems))

    fingerprint = _fingerprint(opts, suite.sha256, arms, describe)
    label = safe_component(arms.run_id) if opts.standalone else \
        f"{safe_component(arms.run_id)}--{safe_component(arms.candidate_id)}"
    run = open_run_dir(state_root, label=label, run_id=arms.run_id, fingerprint=fingerprint,
                       resume=opts.resume, info={"candidate_id": arms.candidate_id,
                                                 "task_suite": str(suite.path),
                                                 "created_at": started_at.isoformat(),
                                                 "options": asdict(opts),
                                                 "arms": arms_to_dict(arms)})
    if opts.resume == "" and not run.resumed:
        log("resume: no earlier run has these inputs; starting a new run")
    arms = replace(arms, run_id=run.run_id)
    run_dir, resumed = run.path, run.resumed

    ctx = judge_context(opts, suite.directory, executor_name, state_root)
    journal = Journal(run_dir / JOURNAL_NAME)
    done = journal.read() if resumed else []
    arm_list = [a for a in (arms.candidate, arms.baseline) if a is not None]
    jobs = plan_jobs(arm_list, suite.tasks, opts.sample_count)
    progress = Progress({a.name: len(suite.tasks) * opts.sample_count for a in arm_list}) \
        if opts.progress else None
    runner = Runner(executor, judges, ctx, journal,
                    RunSettings(concurrency=opts.concurrency, max_retries=opts.max_retries,
                                progress=progress))
    if resumed:
        log(f"resume: {sum(a.status != 'error' for a in done)} finished attempts kept "
            f"from {run_dir}")
    extras: dict[str, Any] = {}
    cache = _open_baseline_cache(opts, arms, log)
    cache_key, hit = None, None
    if cache is not None:
        cache_key = baseline_key(
            suite=suite, skill_sha256=arms.baseline.skill_sha256 if arms.baseline else None,
            executor=describe, skill_mode=opts.skill_mode, pass_k=opts.pass_k,
            samples=opts.sample_count, judge_backend=ctx.judge_backend,
            judge_model=ctx.judge_model, prompt_template_version=PROMPT_TEMPLATE_VERSION)
        hit = cache.get(cache_key)
        reused = _reuse_cached(hit.attempts if hit else (), done, suite, opts.sample_count,
                               journal)
        extras["baseline_cache"] = {
            "enabled": True, "hit": hit is not None, "key": cache_key,
            "age_seconds": round(hit.age_seconds) if hit else None,
            "attempts_from_cache": reused, "directory": str(cache.directory)}
        if reused:
            log(f"baseline: {reused} attempts from the cache (age "
                f"{round(hit.age_seconds) if hit else 0} s)")
    try:
        attempts = runner.run(jobs, done)
    except KeyboardInterrupt:
        finished = sum(a.status != "error" for a in journal.read())
        raise RunInterrupted(str(run_dir), finished) from None
    finally:
        journal.close()
        if cache is not None and cache_key is not None:
            stored = [a for a in journal.read() if a.arm == "baseline"]
            cache.put(cache_key, stored, created_at=hit.created_at if hit else None)
            cache.close()
    extras.update(close_judge_cache(ctx))
    return finish_evaluation(opts, suite, arms, state_root, run_dir, attempts, None, started_at,
                             describe, log=log, extras=extras)


def _open_baseline_cache(opts: RunOptions, arms: Arms, log: Callable[[str], None]) \
        -> BaselineCache | None:
    if not opts.baseline_cache_dir or arms.baseline is None:
        return None
    try:
        return BaselineCache(Path(opts.baseline_cache_dir), parse_duration(opts.baseline_ttl),
                             warn=lambda m: log(f"warning: {m}"))
    except CacheError as exc:
        log(f"warning: {exc}; running without the baseline cache")
        return None


def _reuse_cached(cached: Iterable[Attempt], done: list[Attempt], suite: Any, samples: int,
                  journal: Journal) -> int:
    """Add cached baseline attempts this run still lacks to `done` and to the journal."""
    have = {(a.arm, a.task_id, a.index) for a in done if a.status != "error"}
    task_ids = {t.id for t in suite.tasks}
    reused = 0
    for attempt in cached:
        key = ("baseline", attempt.task_id, attempt.index)
        if attempt.arm != "baseline" or key in have or attempt.task_id not in task_ids \
                or attempt.index >= samples:
            continue
        journal.append(attempt)
        done.append(attempt)
        have.add(key)
        reused += 1
    return reused


def close_judge_cache(ctx: JudgeContext) -> dict[str, Any]:
    """Close the judge cache; its hit and miss counts for the artifact."""
    if ctx.cache is None:
        return {}
    ctx.cache.close()
    return {"judge_cache": {"directory": str(ctx.cache.directory), **ctx.cache.stats()}}


def judge_context(opts: RunOptions, suite_dir: Path, executor_name: str,
                  state_root: Path) -> JudgeContext:
    """Where model-graded judges send their calls, and the judge cache they share."""
    backend = opts.judge_executor or (
        executor_name if executor_name in ("anthropic", "claude-cli") else "mock")
    if opts.mock:
        backend = "mock"
    cache = None
    if backend != "mock" and not opts.no_judge_cache:
        cache = JudgeCache(Path(opts.judge_cache_dir) if opts.judge_cache_dir
                           else state_root / "judge-cache")
    return JudgeContext(suite_dir=suite_dir, mock=backend == "mock", judge_backend=backend,
                        judge_model=opts.judge_model, cache=cache,
                        backend_options={"claude_bin": opts.claude_bin,
                                         "evaluators_dirs": list(opts.evaluators_dirs),
                                         "workspace": str(Path.cwd())})


def finish_evaluation(opts: RunOptions, suite: Any, arms: Arms, state_root: Path,
                      run_dir: Path | None, attempts: list[Attempt], skip: Verdict | None,
                      started_at: datetime, describe: dict[str, Any],
                      log: Callable[[str], None], extras: dict[str, Any] | None = None,
                      output: Path | None = None) -> EvaluationOutcome:
    """Results, statistics, verdict and the artifact, from a run's attempts."""
    ran = skip is None
    cand = arm_results(suite.tasks, attempts_by(attempts, "candidate"), opts.pass_k) \
        if ran else []
    base = arm_results(suite.tasks, attempts_by(attempts, "baseline"), opts.pass_k) \
        if arms.baseline is not None and ran else []
    cand_rate = pass_rate(cand) if skip is None else None
    base_rate = pass_rate(base) if base else None
    delta = round(cand_rate - base_rate, 4) \
        if cand_rate is not None and base_rate is not None else None
    analysis = analyse(cand, base, pass_k=opts.pass_k, samples=opts.sample_count,
                       policy=opts.policy, min_delta=opts.min_delta, margin=opts.margin,
                       compat_delta=delta)
    if skip is not None:
        verdict = skip
    else:
        policy = analysis.policy or {}
        verdict = decide(
            candidate_rate=cand_rate, baseline_rate=base_rate,
            baseline_kind=arms.baseline_kind,  # type: ignore[arg-type]
            health=RunHealth(len(attempts), sum(a.status == "error" for a in attempts),
                             opts.max_error_rate),
            min_pass_rate=opts.min_pass_rate, policy_passed=policy.get("passed"),
            policy_reason=str(policy.get("reasoning", "")))
    for warning in verdict.warnings:
        log(f"warning: {warning}")
    data = artifact_mod.build(
        opts=opts, suite=suite, arms=arms, run_dir=run_dir, candidate=cand, baseline=base,
        rates=(cand_rate, base_rate, delta), verdict=verdict, started_at=started_at,
        executor=describe, attempts=attempts, state_root=state_root, analysis=analysis)
    data.update(extras or {})
    path = output or (Path(opts.output) if opts.output else
                      artifact_mod.default_path(state_root, arms.run_id, arms.candidate_id))
    data = artifact_mod.write(data, path)
    return EvaluationOutcome(data, path.resolve(), run_dir)
