"""RunOptions: the parameters of one evaluation, mirroring the flags of `skill-eval run`, and
the checks on flag combinations that must fail before anything runs."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ..core.blobs import DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_PREVIEW_CHARS
from ..core.paths import DEFAULT_STATE_ROOT
from ..engine.cache import parse_duration
from ..engine.workspace import KEEP_POLICIES
from ..errors import CacheError, ExecutorError, UsageError
from ..executors.base import SKILL_MODES, get_executor_spec, grader_names
from ..executors.version_cache import VERSION_CACHE_NAME
from ..stats.policy import DEFAULT_POLICY, POLICIES

# Attempts per task and arm, at most: jobs are planned up front, so --samples 100000000 would
# end in MemoryError; a thousand attempts per task and arm is beyond any real budget.
MAX_SAMPLES = 1000


@dataclass(frozen=True)
class RunOptions:
    """Parameters of one evaluation; they mirror the flags of `skill-eval run`."""

    task_suite: str
    state_root: str = DEFAULT_STATE_ROOT
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
    mock_rules: bool = False  # mock executor: answers follow the skill's [rule:...] markers
    skill_mode: str = "system"
    model: str | None = None
    max_tokens: int = 4096
    temperature: float | None = None
    claude_bin: str | None = None
    max_turns: int | None = None
    allowed_tools: tuple[str, ...] = ()
    keep_workspaces: str = "failed"  # none | failed | all (workspace.KEEP_POLICIES)
    unsandboxed_bash: bool = False
    price_file: str | None = None
    concurrency: int = 8
    max_retries: int = 5
    max_error_rate: float = 0.1
    policy: str = DEFAULT_POLICY  # scripts/evaluate.py passes "delta", the original rule
    min_delta: float = 0.0
    margin: float | None = None  # None: the policy's own (policy.DEFAULT_MARGIN)
    early_stop: bool = False  # stop sampling once the policy's sequential test decides
    resume: str | None = None  # a run directory, or "" for the latest run with these inputs
    output: str | None = None
    baseline_cache_dir: str | None = None
    baseline_ttl: str = "7d"
    judge_executor: str | None = None
    judge_model: str | None = None
    judge_cache_dir: str | None = None
    no_judge_cache: bool = False
    evaluators_dirs: tuple[str, ...] = ()
    skills_root: str | None = None  # where a ranking's target.path may also point
    progress: bool = True
    config_file: str | None = None  # the project config file the defaults came from
    batch: bool = False  # anthropic: attempts through the Message Batches API (half price)
    fixed_concurrency: bool = False  # anthropic: --concurrency calls at once, not adaptive
    backend: str = "threads"  # where attempts run: threads | ray (backends.BACKENDS)
    ray_address: str | None = None  # --backend ray: the cluster (None: start a local one)
    shard: str | None = (
        None  # "i/n": run only this slice of (task, sample) pairs (engine/shards.py)
    )
    max_preview_chars: int = DEFAULT_MAX_PREVIEW_CHARS  # longer outputs: preview + blob
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES  # longer outputs are cut before judging
    journal_key: str | None = None  # the file signing journals (default <state-root>/journal.key)

    @property
    def executor_name(self) -> str:
        return self.executor or ("mock" if self.mock else "claude-cli")

    @property
    def sample_count(self) -> int:
        return self.samples if self.samples is not None else self.pass_k


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
            raise UsageError(
                "pipeline mode needs --input RANKING and --candidate-id ID "
                "(or use --standalone --skill-path PATH)"
            )
        if opts.skill_path or opts.baseline_skill or opts.no_baseline:
            raise UsageError(
                "--skill-path, --baseline-skill and --no-baseline are for --standalone mode"
            )
    if opts.pass_k < 1:
        raise UsageError(f"--pass-k must be at least 1, got {opts.pass_k}")
    for flag, count in (("--pass-k", opts.pass_k), ("--samples", opts.samples)):
        if count is not None and count > MAX_SAMPLES:  # every attempt is planned up front
            raise UsageError(f"{flag} must be at most {MAX_SAMPLES}, got {count}")
    if opts.samples is not None and opts.samples < opts.pass_k:
        raise UsageError(f"--samples ({opts.samples}) must be at least --pass-k ({opts.pass_k})")
    if opts.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {opts.concurrency}")
    if opts.max_retries < 0:
        raise UsageError(f"--max-retries must be 0 or more, got {opts.max_retries}")
    # NaN fails every comparison, so each range is written as "not inside", which NaN is.
    for name, value, low, high in (
        ("--max-error-rate", opts.max_error_rate, 0.0, 1.0),
        ("--min-pass-rate", opts.min_pass_rate, 0.0, 1.0),
        ("--min-delta", opts.min_delta, -1.0, 1.0),
        ("--margin", 0.0 if opts.margin is None else opts.margin, 0.0, 1.0),
        ("--eval-threshold", opts.eval_threshold, -1e9, 1e9),
    ):
        if not low <= value <= high:
            raise UsageError(f"{name} must be between {low:g} and {high:g}, got {value}")
    if opts.temperature is not None and not 0.0 <= opts.temperature <= 1.0:
        raise UsageError(f"--temperature must be between 0 and 1, got {opts.temperature}")
    if opts.max_tokens < 1:
        raise UsageError(f"--max-tokens must be at least 1, got {opts.max_tokens}")
    if opts.max_preview_chars < 100:  # a preview must show something of both ends
        raise UsageError(f"--max-preview-chars must be at least 100, got {opts.max_preview_chars}")
    if opts.max_output_bytes < 1:
        raise UsageError(f"--max-output-bytes must be at least 1, got {opts.max_output_bytes}")
    if opts.max_turns is not None and opts.max_turns < 1:
        raise UsageError(f"--max-turns must be at least 1, got {opts.max_turns}")
    try:
        parse_duration(opts.baseline_ttl)
    except CacheError as exc:
        raise UsageError(f"--baseline-ttl: {exc}") from None
    if opts.keep_workspaces not in KEEP_POLICIES:
        raise UsageError(f"--keep-workspaces must be one of {', '.join(KEEP_POLICIES)}")
    if opts.policy not in POLICIES:
        raise UsageError(f"--policy must be one of {', '.join(POLICIES)}")
    if opts.skill_mode not in SKILL_MODES:
        raise UsageError(f"--skill-mode must be one of {', '.join(SKILL_MODES)}")
    # One executor looked up by name imports that one only; listing every name would import
    # them all and scan the plugins' entry points (~100 ms before the first attempt).
    if opts.executor:
        try:
            get_executor_spec(opts.executor)
        except ExecutorError as exc:
            raise UsageError(f"--executor: {exc}") from None
    if opts.judge_executor and not _can_grade(opts.judge_executor):
        raise UsageError(f"--judge-executor must be one of {', '.join(grader_names())}")
    if opts.batch and opts.executor_name != "anthropic":
        raise UsageError(
            "--batch sends attempts through the Anthropic Message Batches API: "
            f"it needs --executor anthropic (got {opts.executor_name})"
        )
    if opts.mock and opts.executor not in (None, "mock"):
        raise UsageError("--mock means --executor mock; drop one of them")
    if opts.mock and opts.judge_executor not in (None, "mock"):
        raise UsageError(
            "--mock mocks the judges too; to judge scripted outputs with a real "
            "model use --executor mock --judge-executor "
            f"{opts.judge_executor}"
        )
    _check_scale(opts)
    _check_paths(opts)


def _check_scale(opts: RunOptions) -> None:
    """--backend, --ray-address and --shard."""
    from ..backends import BACKENDS
    from ..engine.shards import parse_shard

    if opts.backend not in BACKENDS:
        raise UsageError(f"--backend must be one of {', '.join(BACKENDS)}, got {opts.backend!r}")
    if opts.ray_address and opts.backend != "ray":
        raise UsageError("--ray-address is for --backend ray")
    parse_shard(opts.shard)
    if opts.early_stop and opts.shard is not None:
        raise UsageError(
            "--early-stop decides from every task's attempts; a shard sees only "
            "its slice: drop one of --early-stop and --shard"
        )
    if opts.early_stop and opts.batch:
        raise UsageError(
            "--early-stop runs the samples in rounds and --batch sends every "
            "attempt at once: drop one of them"
        )
    if opts.batch and opts.backend == "ray":
        raise UsageError(
            "--batch and --backend ray do not mix: the batch is sent from this "
            "machine and its results would not reach the Ray workers"
        )
    if opts.shard is not None and opts.baseline_cache_dir:
        raise UsageError(
            "--shard cannot use --baseline-cache-dir: a shard runs part of the "
            "baseline, and the cache holds whole baselines"
        )


def executor_config(opts: RunOptions, name: str, **extra: Any) -> Any:
    """The config of executor `name` from the run's flags: each flag goes to the config field
    of the same name, when that executor's config has one (`extra` adds values read from
    files, such as mock_outputs)."""
    spec = get_executor_spec(name)
    flags: dict[str, Any] = {
        "skill_mode": opts.skill_mode,
        "model": opts.model,
        "max_tokens": opts.max_tokens,
        "temperature": opts.temperature,
        "claude_bin": opts.claude_bin,
        "max_turns": opts.max_turns,
        "allowed_tools": opts.allowed_tools,
        "unsandboxed_bash": opts.unsandboxed_bash,
        "mock_rules": opts.mock_rules,
        "price_file": Path(opts.price_file) if opts.price_file else None,
        "batch": opts.batch,
        "concurrency": opts.concurrency,
        "adaptive_concurrency": not opts.fixed_concurrency,
        "version_cache": str(Path(opts.state_root) / VERSION_CACHE_NAME),
        **extra,
    }
    known = {f.name for f in fields(spec.config_cls)}
    return spec.config({k: v for k, v in flags.items() if k in known})


def _can_grade(name: str) -> bool:
    try:
        return get_executor_spec(name).grader is not None
    except ExecutorError:
        return False


def _check_paths(opts: RunOptions) -> None:
    """Paths that cannot work, found before anything runs rather than after."""
    state = Path(opts.state_root)
    if state.exists() and not state.is_dir():
        raise UsageError(f"--state-root {state}: exists and is not a directory")
    if opts.output:
        out = Path(opts.output)
        if out.is_dir():
            raise UsageError(f"--output {out}: is a directory; give a file path")
        if out.parent.exists() and not out.parent.is_dir():
            raise UsageError(f"--output {out}: {out.parent} is not a directory")
