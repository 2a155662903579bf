"""`skill-eval run`: flags in, one call to run_evaluation, a summary out."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

import click

from ..errors import RunInterrupted, SkillEvalError
from ..evaluate import EvaluationOutcome, run_evaluation
from ..executors.base import SKILL_MODES
from ..options import JUDGE_BACKENDS, RunOptions
from ..policy import DEFAULT_POLICY, POLICIES
from .common import EXIT_ERROR, EXIT_FAIL, EXIT_OK, EXIT_USAGE, fail, interrupted

EXECUTORS = ("mock", "anthropic", "claude-cli")
VERDICT_EXIT = {"pass": EXIT_OK, "skipped": EXIT_OK, "fail": EXIT_FAIL, "error": EXIT_ERROR}


def _csv(_ctx: Any, _param: Any, value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip()) if value else ()


def run_flags(default_skill_mode: str, default_policy: str = DEFAULT_POLICY) \
        -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Every flag of `skill-eval run`, shared with scripts/evaluate.py (whose contract keeps
    the original `delta` policy as its default)."""
    flags = [
        click.option("--task-suite", required=True, metavar="PATH",
                     help="Task suite YAML (always required)."),
        click.option("--state-root", required=True, metavar="DIR",
                     help="Directory for runs and artifacts; created if missing."),
        click.option("--input", "input_", metavar="PATH",
                     help="Pipeline mode: ranking artifact from the discriminator."),
        click.option("--candidate-id", metavar="ID",
                     help="Pipeline mode: the candidate in scored_candidates[] to evaluate."),
        click.option("--standalone", is_flag=True,
                     help="Evaluate a skill directly, no ranking artifact."),
        click.option("--skill-path", metavar="PATH",
                     help="Standalone: the candidate skill, a SKILL.md or its directory."),
        click.option("--baseline-skill", metavar="PATH",
                     help="Standalone: compare against this skill instead of no skill."),
        click.option("--no-baseline", is_flag=True,
                     help="Standalone: run the candidate alone; pass iff pass rate >= "
                          "--min-pass-rate."),
        click.option("--pass-k", type=int, default=1, show_default=True, metavar="N",
                     help="Attempts per task; a task passes if any of its first N passes."),
        click.option("--samples", type=int, default=None, metavar="N",
                     help="Attempts per task and arm (default: --pass-k)."),
        click.option("--eval-threshold", type=float, default=1.0, show_default=True,
                     metavar="X", help="Pipeline: candidates scored below X are skipped."),
        click.option("--min-pass-rate", type=float, default=0.5, show_default=True,
                     metavar="X", help="With --no-baseline: the pass rate needed to pass."),
        click.option("--mock", is_flag=True,
                     help="No model calls: mock executor and mock judges (offline, for CI)."),
        click.option("--executor", type=click.Choice(EXECUTORS), default=None,
                     help="How tasks run (default: claude-cli, or mock with --mock)."),
        click.option("--mock-outputs", metavar="FILE",
                     help="Script the mock executor: {task_id: text} or {candidate: {...}, "
                          "baseline: {...}} (YAML or JSON)."),
        click.option("--skill-mode", type=click.Choice(SKILL_MODES),
                     default=default_skill_mode, show_default=True,
                     help="How the skill reaches the model: prepended to the task, as the "
                          "system prompt, or installed as a Claude Code skill (claude-cli)."),
        click.option("--model", envvar="SKILL_EVAL_MODEL", metavar="NAME",
                     help="Model for the executor [env SKILL_EVAL_MODEL]."),
        click.option("--max-tokens", type=int, default=4096, show_default=True,
                     help="anthropic executor: max output tokens."),
        click.option("--temperature", type=float, default=None,
                     help="anthropic executor: sampling temperature."),
        click.option("--claude-bin", metavar="PATH", help="claude-cli: the claude binary."),
        click.option("--max-turns", type=int, default=None, help="claude-cli: --max-turns."),
        click.option("--allowed-tools", callback=_csv, metavar="A,B",
                     help="claude-cli: tools to allow (default: none)."),
        click.option("--price-file", metavar="FILE",
                     help="anthropic: JSON/YAML price table overriding the built-in one."),
        click.option("--concurrency", type=int, default=8, show_default=True,
                     help="Attempts running at once, both arms sharing one pool."),
        click.option("--max-retries", type=int, default=5, show_default=True,
                     help="Retries for rate limits, overload, 5xx, timeouts, judge errors."),
        click.option("--max-error-rate", type=float, default=0.1, show_default=True,
                     help="Above this share of attempts in error the verdict is error."),
        click.option("--policy", type=click.Choice(POLICIES), default=default_policy,
                     show_default=True,
                     help="no-regression: pass iff the one-sided 96% lower bound of delta "
                          "> -margin (10 points): a skill 10 points worse passes in <= 5% of "
                          "runs. delta: pass iff delta >= --min-delta (the original rule). "
                          "non-inferior: pass iff the 95% interval's low end > -margin "
                          "(5 points). superior: pass iff the low end > 0."),
        click.option("--min-delta", type=float, default=0.0, show_default=True,
                     help="delta policy: the smallest candidate - baseline that passes."),
        click.option("--margin", type=float, default=None,
                     help="no-regression and non-inferior: how much worse the candidate may "
                          "be (default 0.10 and 0.05)."),
        click.option("--resume", is_flag=False, flag_value="", default=None, metavar="RUN_DIR",
                     help="Continue a stopped run (its directory, or the latest run with "
                          "the same inputs when given alone); only missing attempts run."),
        click.option("--output", metavar="PATH",
                     help="Artifact path (default <state-root>/evaluations/"
                          "<run_id>-<candidate_id>.json)."),
        click.option("--baseline-cache-dir", metavar="DIR",
                     envvar="SKILL_EVAL_BASELINE_CACHE_DIR",
                     help="Reuse baseline results from this cache while the suite, fixtures, "
                          "baseline skill, executor, model and settings are unchanged "
                          "[env SKILL_EVAL_BASELINE_CACHE_DIR]."),
        click.option("--baseline-ttl", default="7d", show_default=True, metavar="DURATION",
                     help="How long cached baselines live (e.g. 7d, 12h, 3600)."),
        click.option("--judge-executor", type=click.Choice(JUDGE_BACKENDS), default=None,
                     help="Backend for model-graded judges (default: follows --executor)."),
        click.option("--judge-model", metavar="NAME", help="Model for LLM judges."),
        click.option("--judge-cache-dir", metavar="DIR",
                     help="Judge cache (default <state-root>/judge-cache)."),
        click.option("--no-judge-cache", is_flag=True, help="Judge every output afresh."),
        click.option("--evaluators-dir", "evaluators_dirs", multiple=True, metavar="DIR",
                     help="Extra evaluator skills for `rubric` judges (repeatable; highest "
                          "precedence first)."),
        click.option("--quiet", "-q", is_flag=True, help="No progress lines."),
    ]

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for flag in reversed(flags):
            func = flag(func)
        return func

    return decorate


def options_from(kwargs: dict[str, Any]) -> RunOptions:
    kwargs = dict(kwargs)
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
    from ..report import render_table

    return f"{render_table(outcome.artifact).rstrip()}\nartifact            {outcome.path}"


@click.command("run")
@run_flags(default_skill_mode="system")
def command(**kwargs: Any) -> None:
    """Run a task suite with a candidate skill and a baseline and write a verdict artifact.

    \b
    Pipeline mode:   --input ranking.json --candidate-id ID
    Standalone mode: --standalone --skill-path SKILL_DIR [--baseline-skill PATH | --no-baseline]

    Prints the artifact path on stdout and a summary on stderr. Exit codes: 0 pass or
    skipped, 1 fail, 3 error verdict, 2 bad input or usage.
    """
    stop_on_sigterm()
    try:
        outcome = run_evaluation(options_from(kwargs))
    except RunInterrupted as exc:
        interrupted(exc)
    except SkillEvalError as exc:
        fail(str(exc), EXIT_USAGE)
    click.echo(summary(outcome), err=True)
    click.echo(str(outcome.path))
    sys.exit(VERDICT_EXIT[outcome.verdict])
