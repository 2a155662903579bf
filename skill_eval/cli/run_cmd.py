"""`skill-eval run`: flags in, one call to run_evaluation, a summary out."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..core.blobs import DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_PREVIEW_CHARS
from ..core.paths import DEFAULT_STATE_ROOT
from ..engine.conductor import EvaluationOutcome, run_evaluation
from ..errors import ConfigError, RunInterrupted, SkillEvalError
from ..executors.base import SKILL_MODES, executor_names, grader_names
from ..plan.config import chosen_config, command_defaults, load_config
from ..plan.options import RunOptions
from ..stats.policy import DEFAULT_POLICY, POLICIES
from .common import EXIT_ERROR, EXIT_FAIL, EXIT_OK, EXIT_USAGE, exit_code, fail, interrupted

CONFIG_META = "skill_eval.config_file"  # ctx.meta key: the config file read, or None
VERDICT_EXIT = {"pass": EXIT_OK, "skipped": EXIT_OK, "fail": EXIT_FAIL, "error": EXIT_ERROR}


class RegistryChoice(click.Choice):  # type: ignore[type-arg]
    """A Choice whose values come from the executor registry (entry-point plugins too), read
    when the flag is parsed or shown, not when the CLI is imported."""

    def __init__(
        self, names: Callable[[], list[str]], accepts: Callable[[str], bool] | None = None
    ) -> None:
        super().__init__(())
        self._names = names
        self._accepts = accepts  # a quick yes for one name, without importing every executor

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and self._accepts is not None and self._accepts(value):
            return value
        return super().convert(value, param, ctx)

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self._names())

    @choices.setter
    def choices(self, value: Any) -> None:
        pass  # set by click.Choice.__init__; the registry is the source


def _is_executor(name: str, grader: bool = False) -> bool:
    """Whether `name` is a registered executor (that can grade): imports that one only."""
    from ..executors.base import REGISTRY

    spec = REGISTRY.get(name)
    return spec is not None and (not grader or spec.grader is not None)


def _csv(_ctx: Any, _param: Any, value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip()) if value else ()


def run_flags(
    default_skill_mode: str,
    default_policy: str = DEFAULT_POLICY,
    default_state_root: str | None = DEFAULT_STATE_ROOT,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Every flag of `skill-eval run`, shared with scripts/evaluate.py (whose contract keeps
    the original `delta` policy as its default, and --state-root required: None)."""
    flags = [
        click.option(
            "--task-suite", required=True, metavar="PATH", help="Task suite YAML (always required)."
        ),
        click.option(
            "--state-root",
            metavar="DIR",
            help="Directory for runs and artifacts; "
            "created if missing"
            + (" (default: .skill-eval in the current directory)." if default_state_root else "."),
            # click 8.3 takes an explicit default=None as a value: required then
            # would never fire, so the default is only passed when there is one.
            **({"default": default_state_root} if default_state_root else {"required": True}),
        ),
        click.option(
            "--input",
            "input_",
            metavar="PATH",
            help="Pipeline mode: ranking artifact from the discriminator.",
        ),
        click.option(
            "--candidate-id",
            metavar="ID",
            help="Pipeline mode: the candidate in scored_candidates[] to evaluate.",
        ),
        click.option(
            "--standalone",
            is_flag=True,
            help="Evaluate a skill directly, no ranking artifact"
            + (" (implied by --skill-path without --input)." if default_state_root else "."),
        ),
        click.option(
            "--skill-path",
            metavar="PATH",
            help="Standalone: the candidate skill, a SKILL.md or its directory.",
        ),
        click.option(
            "--baseline-skill",
            metavar="PATH",
            help="Standalone: compare against this skill instead of no skill.",
        ),
        click.option(
            "--no-baseline",
            is_flag=True,
            help="Standalone: run the candidate alone; pass iff pass rate >= --min-pass-rate.",
        ),
        click.option(
            "--pass-k",
            type=int,
            default=1,
            show_default=True,
            metavar="N",
            help="Attempts per task; a task passes if any of its first N passes.",
        ),
        click.option(
            "--samples",
            type=int,
            default=None,
            metavar="N",
            help="Attempts per task and arm (default: --pass-k; at most 1000).",
        ),
        click.option(
            "--eval-threshold",
            type=float,
            default=1.0,
            show_default=True,
            metavar="X",
            help="Pipeline: candidates scored below X are skipped.",
        ),
        click.option(
            "--min-pass-rate",
            type=float,
            default=0.5,
            show_default=True,
            metavar="X",
            help="With --no-baseline: the pass rate needed to pass.",
        ),
        click.option(
            "--mock",
            is_flag=True,
            help="No model calls: mock executor and mock judges (offline, for CI).",
        ),
        click.option(
            "--executor",
            type=RegistryChoice(executor_names, _is_executor),
            default=None,
            help="How tasks run (default: claude-cli, or mock with --mock).",
        ),
        click.option(
            "--mock-outputs",
            metavar="FILE",
            help="Script the mock executor: {task_id: text} or {candidate: {...}, "
            "baseline: {...}} (YAML or JSON); for agent tasks an output may be "
            "{text, files: {path: content}, tools: [{name, input}]}.",
        ),
        click.option(
            "--mock-rules",
            is_flag=True,
            help="Mock executor test double: unscripted answers name a task's "
            "`contains` terms only when the skill holds its [rule:<task or "
            "category>] marker (see references/improve.md).",
        ),
        click.option(
            "--skill-mode",
            type=click.Choice(SKILL_MODES),
            default=default_skill_mode,
            show_default=True,
            help="How the skill reaches the model: prepended to the task, as the "
            "system prompt, or installed as a Claude Code skill (claude-cli).",
        ),
        click.option(
            "--model",
            envvar="SKILL_EVAL_MODEL",
            metavar="NAME",
            help="Model for the executor [env SKILL_EVAL_MODEL].",
        ),
        click.option(
            "--max-tokens",
            type=int,
            default=4096,
            show_default=True,
            help="anthropic executor: max output tokens.",
        ),
        click.option(
            "--temperature",
            type=float,
            default=None,
            help="anthropic executor: sampling temperature.",
        ),
        click.option("--claude-bin", metavar="PATH", help="claude-cli: the claude binary."),
        click.option("--max-turns", type=int, default=None, help="claude-cli: --max-turns."),
        click.option(
            "--allowed-tools",
            callback=_csv,
            metavar="A,B",
            help="claude-cli: tools to offer (default: none; installed mode: "
            "Skill,Read,Glob,Grep); file tools work inside the workspace only.",
        ),
        click.option(
            "--unsandboxed-bash",
            is_flag=True,
            help="claude-cli: offer Bash even where Claude Code's sandbox cannot run "
            "(Bash is then NOT confined to the workspace).",
        ),
        click.option(
            "--keep-workspaces",
            type=click.Choice(["none", "failed", "all"]),
            default="failed",
            show_default=True,
            help="Agent tasks: keep the final workspace of these attempts under "
            "<run>/workspaces/<arm>/<task>/<i>/ (20 MB cap each), for reading "
            "and for `rejudge`.",
        ),
        click.option(
            "--price-file",
            metavar="FILE",
            help="anthropic: JSON/YAML price table overriding the built-in one.",
        ),
        click.option(
            "--concurrency",
            type=int,
            default=8,
            show_default=True,
            help="Attempts running at once, both arms sharing one pool.",
        ),
        click.option(
            "--max-retries",
            type=int,
            default=5,
            show_default=True,
            help="Retries for rate limits, overload, 5xx, timeouts and transient judge "
            "errors (not for errors a retry cannot heal).",
        ),
        click.option(
            "--max-error-rate",
            type=float,
            default=0.1,
            show_default=True,
            help="Above this share of attempts in error the verdict is error.",
        ),
        click.option(
            "--policy",
            type=click.Choice(POLICIES),
            default=default_policy,
            show_default=True,
            help="no-regression: pass iff the one-sided 96% lower bound of delta "
            "> -margin (10 points): a skill 10 points worse passes in <= 5% of "
            "runs. delta: pass iff delta >= --min-delta (the original rule). "
            "non-inferior: pass iff the 95% interval's low end > -margin "
            "(5 points). superior: pass iff the low end > 0.",
        ),
        click.option(
            "--min-delta",
            type=float,
            default=0.0,
            show_default=True,
            help="delta policy: the smallest candidate - baseline that passes.",
        ),
        click.option(
            "--margin",
            type=float,
            default=None,
            help="no-regression and non-inferior: how much worse the candidate may "
            "be (default 0.10 and 0.05).",
        ),
        click.option(
            "--early-stop",
            is_flag=True,
            help="With --samples N: stop sampling once the policy's sequential test "
            "(alpha spending over sample rounds) decides; false accepts stay at "
            "the fixed-sample level. See references/early-stop.md.",
        ),
        click.option(
            "--resume",
            is_flag=False,
            flag_value="",
            default=None,
            metavar="RUN_DIR",
            help="Continue a stopped run (its directory, or the latest run with "
            "the same inputs when given alone); only missing attempts run.",
        ),
        click.option(
            "--output",
            metavar="PATH",
            help="Artifact path (default <state-root>/evaluations/<run_id>-<candidate_id>.json).",
        ),
        click.option(
            "--baseline-cache-dir",
            metavar="DIR",
            envvar="SKILL_EVAL_BASELINE_CACHE_DIR",
            help="Reuse baseline results from this cache while the suite, fixtures, "
            "baseline skill, executor, model and settings are unchanged "
            "[env SKILL_EVAL_BASELINE_CACHE_DIR].",
        ),
        click.option(
            "--baseline-ttl",
            default="7d",
            show_default=True,
            metavar="DURATION",
            help="How long cached baselines live (e.g. 7d, 12h, 3600).",
        ),
        click.option(
            "--judge-executor",
            default=None,
            type=RegistryChoice(grader_names, lambda n: _is_executor(n, grader=True)),
            help="Backend for model-graded judges (default: follows --executor).",
        ),
        click.option("--judge-model", metavar="NAME", help="Model for LLM judges."),
        click.option(
            "--judge-cache-dir",
            metavar="DIR",
            help="Judge cache (default <state-root>/judge-cache).",
        ),
        click.option("--no-judge-cache", is_flag=True, help="Judge every output afresh."),
        click.option(
            "--evaluators-dir",
            "evaluators_dirs",
            multiple=True,
            metavar="DIR",
            help="Extra evaluator skills for `rubric` judges (repeatable; highest "
            "precedence first).",
        ),
        click.option(
            "--skills-root",
            metavar="DIR",
            help="Pipeline: an extra fence: a ranking's target.path must lie "
            "inside DIR (by default a skill anywhere is accepted).",
        ),
        click.option(
            "--quiet", "-q", "--no-progress", is_flag=True, help="No progress bar or lines."
        ),
        click.option(
            "--batch",
            is_flag=True,
            help="anthropic: send the attempts through the Message Batches API (half "
            "price; results in minutes to hours); --resume polls the same batch.",
        ),
        click.option(
            "--fixed-concurrency",
            is_flag=True,
            help="anthropic: keep --concurrency calls at once instead of adapting "
            "(halve on 429/529, grow by one per window of successes).",
        ),
        click.option(
            "--backend",
            type=click.Choice(["threads", "ray"]),
            default="threads",
            show_default=True,
            help="Where attempts run: a thread pool here, or Ray tasks on a cluster "
            "(needs skill-eval[ray]; --concurrency still caps attempts at once).",
        ),
        click.option(
            "--ray-address",
            metavar="ADDRESS",
            help="--backend ray: the cluster to use (e.g. auto, ray://host:10001; "
            "default: start a local Ray for the run).",
        ),
        click.option(
            "--shard",
            metavar="I/N",
            help="Run only slice I of N of the (task, sample) pairs (both arms of a "
            "pair together), in its own run directory; join the slices with "
            "`skill-eval merge` (see references/ci.md).",
        ),
        click.option(
            "--journal-key",
            metavar="FILE",
            envvar="SKILL_EVAL_JOURNAL_KEY_FILE",
            help="The key file that signs the run's journal, so --resume and `merge` take "
            "only records skill-eval wrote (default <state-root>/journal.key, made on first "
            "use); shards merged on another machine share one [env "
            "SKILL_EVAL_JOURNAL_KEY_FILE].",
        ),
        click.option(
            "--max-preview-chars",
            type=int,
            default=DEFAULT_MAX_PREVIEW_CHARS,
            show_default=True,
            metavar="N",
            help="Outputs longer than this are kept whole in <run>/blobs/ and shown "
            "in the journal and artifact by their first and last N/2 characters.",
        ),
        click.option(
            "--max-output-bytes",
            type=int,
            default=DEFAULT_MAX_OUTPUT_BYTES,
            show_default=True,
            metavar="N",
            help="An executor output longer than this is cut to it before judging "
            "(the cut is marked and recorded; not an error).",
        ),
    ]

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for flag in reversed(flags):
            func = flag(func)
        return func

    return decorate


def options_from(kwargs: dict[str, Any], config_file: Path | None = None) -> RunOptions:
    kwargs = dict(kwargs)
    kwargs.pop("config", None)
    kwargs.pop("no_config", None)
    kwargs["config_file"] = str(config_file) if config_file is not None else None
    kwargs["input"] = kwargs.pop("input_")
    kwargs["progress"] = not kwargs.pop("quiet")
    return RunOptions(**kwargs)


def stop_on_sigterm() -> None:
    """A `kill` stops a run the way Ctrl-C does: finished attempts saved, resumable."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, handler)


def summary(outcome: EvaluationOutcome) -> str:
    """The end-of-run report for stderr: the per-task table, rates, verdict, artifact path."""
    from ..report.render import render_table

    lines = [render_table(outcome.artifact).rstrip()]
    cause = first_error(outcome.artifact)
    if cause is not None:
        lines.append(f"first error         {cause}")
    return "\n".join([*lines, f"artifact            {outcome.path}"])


def first_error(artifact: dict[str, Any]) -> str | None:
    """The first attempt error with its cause on one line: its first line (what failed) and
    its last (the cause, e.g. `ModuleNotFoundError: ...`), which the table cuts short."""
    errors = artifact.get("errors") or []
    if not errors:
        return None
    first = errors[0]
    parts = [line.strip() for line in str(first.get("error") or "").splitlines() if line.strip()]
    text = parts[0] if len(parts) < 2 else f"{parts[0]} ... {parts[-1]}"
    more = f" (and {len(errors) - 1} more in the artifact)" if len(errors) > 1 else ""
    from ..report.view import one_line  # no control or bidi characters from the output

    return one_line(f"{first.get('task_id')} ({first.get('arm')}): {text}{more}")


class ConfigProblem(click.ClickException):
    """A bad project config file, shown as `Error: ...` with the usage exit code."""

    exit_code = EXIT_USAGE


class RunCommand(click.Command):
    """`run`, with defaults from the project config file (skill_eval.plan.config) filled in
    before click parses the line, so the command line beats the file."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        path = None
        if not {"-h", "--help"} & set(args):
            try:
                path = chosen_config(args, Path.cwd())
                if path is not None:
                    defaults = command_defaults(self, load_config(path))
                    ctx.default_map = {**(ctx.default_map or {}), **defaults}
            except ConfigError as exc:
                raise ConfigProblem(str(exc)) from None
        ctx.meta[CONFIG_META] = path
        return super().parse_args(ctx, args)


@click.command("run", cls=RunCommand)
@run_flags(default_skill_mode="system")
@click.option(
    "--config",
    metavar="FILE",
    help="Read defaults from this file: a pyproject.toml ([tool.skill-eval]) or a "
    "skill-eval.toml (default: the nearest one from here upwards).",
)
@click.option("--no-config", is_flag=True, help="Read no config file.")
def command(**kwargs: Any) -> None:
    """Run a task suite with a candidate skill and a baseline and write a verdict artifact.

    \b
    Pipeline mode:   --input ranking.json --candidate-id ID
    Standalone mode: --skill-path SKILL_DIR [--baseline-skill PATH | --no-baseline]

    Defaults for any flag can live in `[tool.skill-eval]` of the nearest pyproject.toml, or
    at the top of a skill-eval.toml, keyed by the long flag name (executor = "anthropic",
    concurrency = 4); the command line and SKILL_EVAL_* variables beat the file, and
    relative paths in it are relative to it. The artifact's manifest names the file used.

    Prints the artifact path on stdout and a summary on stderr. Exit codes: 0 pass or
    skipped, 1 fail, 3 error verdict or a harness fault (executor cannot run, run stopped),
    2 bad input or usage.
    """
    stop_on_sigterm()
    config_file = click.get_current_context().meta.get(CONFIG_META)
    if kwargs["skill_path"] and not kwargs["input_"]:
        kwargs["standalone"] = True  # a skill to evaluate and no ranking: standalone mode
    try:
        outcome = run_evaluation(options_from(kwargs, config_file))
    except RunInterrupted as exc:
        interrupted(exc)
    except SkillEvalError as exc:
        fail(str(exc), exit_code(exc))
    except SystemExit as exc:  # raised by code inside the run (a plugin): exit 0 would lie
        fail(
            f"the run was ended by SystemExit({exc.code!r}) raised inside it; "
            "no artifact was written",
            EXIT_ERROR,
        )
    click.echo(summary(outcome), err=True)
    click.echo(str(outcome.path))
    sys.exit(VERDICT_EXIT[outcome.verdict])
