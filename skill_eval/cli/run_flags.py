"""The flags of `skill-eval run`, each defined once, and the sections `run --help` shows
them in (click-option-group). scripts/evaluate.py takes the same set (`run_flags`); `improve`,
`review` and `rejudge` take the ones they share with run through `flag(name, ...)`, which
may change the help text or default but not what the flag is, and may put it in a section of
their own help.

Sections follow the run plan's owners (skill_eval/plan/run_plan.py): inputs, the executor
and its options, execution, judging, decision, records, and the console.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from click_option_group import GroupedOption, OptionGroup

from ..core.blobs import DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_PREVIEW_CHARS
from ..core.paths import DEFAULT_STATE_ROOT
from ..executors.base import SKILL_MODES, executor_names, grader_names
from ..stats.policy import DEFAULT_POLICY, POLICIES
from .choices import Choice, RegistryChoice, is_executor
from .flag_help import HELP

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


class RegistryHelp(click.Option):
    """An option whose help names executors (flag_help.py's functions): read from the
    registry when the help is shown, not when the CLI is imported (as RegistryChoice)."""

    def __init__(self, *args: Any, described: Callable[[], str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.described = described

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = self.described()
        return super().get_help_record(ctx)


class GroupedRegistryHelp(RegistryHelp, GroupedOption):
    """RegistryHelp for an option in a section of the help (click-option-group)."""


def _csv(_ctx: Any, _param: Any, value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip()) if value else ()


def _f(*decls: str, **attrs: Any) -> tuple[tuple[str, ...], dict[str, Any]]:
    """A flag's declarations and click attributes (its help is in cli/flag_help.py)."""
    return decls, attrs


# name -> (declarations, attributes): the one definition of each flag.
FLAGS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "task-suite": _f("--task-suite", metavar="PATH"),
    "changed-since": _f("--changed-since", metavar="REF"),
    "evals-from": _f("--evals-from", type=click.Choice(["head", "base"]), default="head"),
    "allow-unjudged": _f("--allow-unjudged", is_flag=True),
    "standalone": _f("--standalone", is_flag=True),
    "skill-path": _f("--skill-path", metavar="PATH"),
    "baseline-skill": _f("--baseline-skill", metavar="PATH"),
    "no-baseline": _f("--no-baseline", is_flag=True),
    "arm": _f("--arm", "arm", multiple=True, metavar="NAME=EXECUTOR:DELIVERY[@MODEL]"),
    "reference-arm": _f("--reference-arm", metavar="NAME"),
    "input": _f("--input", "input_", metavar="PATH"),
    "candidate-id": _f("--candidate-id", metavar="ID"),
    "skills-root": _f("--skills-root", metavar="DIR"),
    "strict": _f("--strict", is_flag=True),
    "executor": _f("--executor", type=RegistryChoice(executor_names, is_executor), default=None),
    "mock": _f("--mock", is_flag=True),
    "model": _f("--model", envvar="SKILL_EVAL_MODEL", metavar="NAME"),
    "skill-mode": _f("--skill-mode", type=Choice(SKILL_MODES), default="system", show_default=True),
    "executor-option": _f(
        "--executor-option", "executor_option", multiple=True, metavar="KEY=VALUE"
    ),
    "max-tokens": _f("--max-tokens", type=int, default=None, metavar="N"),
    "temperature": _f("--temperature", type=float, default=None, metavar="X"),
    "price-file": _f("--price-file", metavar="FILE"),
    "base-url": _f("--base-url", metavar="URL"),
    "batch": _f("--batch", is_flag=True),
    "fixed-concurrency": _f("--fixed-concurrency", is_flag=True),
    "claude-bin": _f("--claude-bin", metavar="PATH"),
    "max-turns": _f("--max-turns", type=int, default=None, metavar="N"),
    "trigger-model": _f("--trigger-model", metavar="NAME"),
    "allowed-tools": _f("--allowed-tools", callback=_csv, metavar="A,B"),
    "unsandboxed-bash": _f("--unsandboxed-bash", is_flag=True),
    "mock-outputs": _f("--mock-outputs", metavar="FILE"),
    "mock-rules": _f("--mock-rules", is_flag=True),
    "runner": _f("--runner", type=Choice(["threads", "ray"]), default="threads", show_default=True),
    "backend": _f(
        "--backend", "backend", type=Choice(["threads", "ray"]), default=None, hidden=True
    ),
    "ray-address": _f("--ray-address", metavar="ADDRESS"),
    "concurrency": _f("--concurrency", type=int, default=8, show_default=True),
    "max-retries": _f("--max-retries", type=int, default=5, show_default=True),
    "no-jail": _f("--no-jail", is_flag=True),
    "jail": _f("--jail", metavar="NAME", default=None),
    "shard": _f("--shard", metavar="I/N"),
    "judge-executor": _f(
        "--judge-executor",
        default=None,
        type=RegistryChoice(grader_names, lambda n: is_executor(n, grader=True)),
    ),
    "judge-model": _f("--judge-model", metavar="NAME"),
    "judge-cache-dir": _f("--judge-cache-dir", metavar="DIR"),
    "no-judge-cache": _f("--no-judge-cache", is_flag=True),
    "evaluators-dir": _f("--evaluators-dir", "evaluators_dirs", multiple=True, metavar="DIR"),
    "pass-k": _f("--pass-k", type=int, default=1, show_default=True, metavar="N"),
    "samples": _f("--samples", type=int, default=None, metavar="N"),
    "policy": _f("--policy", type=Choice(POLICIES), default=DEFAULT_POLICY, show_default=True),
    "margin": _f("--margin", type=float, default=None),
    "min-delta": _f("--min-delta", type=float, default=0.0, show_default=True),
    "early-stop": _f("--early-stop", is_flag=True),
    "budget": _f("--budget", type=int, default=None, metavar="ATTEMPTS"),
    "eval-threshold": _f(
        "--eval-threshold", type=float, default=1.0, show_default=True, metavar="X"
    ),
    "min-pass-rate": _f("--min-pass-rate", type=float, default=0.5, show_default=True, metavar="X"),
    "max-error-rate": _f("--max-error-rate", type=float, default=0.1, show_default=True),
    "state-root": _f("--state-root", metavar="DIR", default=DEFAULT_STATE_ROOT),
    "output": _f("--output", metavar="PATH"),
    "summary": _f("--summary", metavar="FILE"),
    "resume": _f("--resume", is_flag=False, flag_value="", default=None, metavar="RUN_DIR"),
    "keep-workspaces": _f(
        "--keep-workspaces",
        type=Choice(["none", "failed", "all"]),
        default="failed",
        show_default=True,
    ),
    "baseline-cache-dir": _f(
        "--baseline-cache-dir", metavar="DIR", envvar="SKILL_EVAL_BASELINE_CACHE_DIR"
    ),
    "baseline-ttl": _f("--baseline-ttl", default="7d", show_default=True, metavar="DURATION"),
    "journal-key": _f("--journal-key", metavar="FILE", envvar="SKILL_EVAL_JOURNAL_KEY_FILE"),
    "max-preview-chars": _f(
        "--max-preview-chars",
        type=int,
        default=DEFAULT_MAX_PREVIEW_CHARS,
        show_default=True,
        metavar="N",
    ),
    "max-output-bytes": _f(
        "--max-output-bytes",
        type=int,
        default=DEFAULT_MAX_OUTPUT_BYTES,
        show_default=True,
        metavar="N",
    ),
    "max-cost-usd": _f("--max-cost-usd", type=float, default=None, metavar="DOLLARS"),
    "max-tokens-total": _f("--max-tokens-total", type=int, default=None, metavar="N"),
    "dry-run": _f("--dry-run", is_flag=True),
    "quiet": _f("--quiet", "-q", "--no-progress", is_flag=True),
    "config": _f("--config", metavar="FILE"),
    "no-config": _f("--no-config", is_flag=True),
}


# (title, help, flags) of each section of `run --help`, in order.
SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "Inputs",
        "What is evaluated.",
        (
            "task-suite",
            "changed-since",
            "evals-from",
            "allow-unjudged",
            "standalone",
            "skill-path",
            "baseline-skill",
            "no-baseline",
            "arm",
            "reference-arm",
            "input",
            "candidate-id",
            "skills-root",
            "strict",
        ),
    ),
    (
        "Executor",
        "The model service that runs the attempts.",
        ("executor", "mock", "model", "skill-mode", "executor-option"),
    ),
    (
        "Executor option shorthands",
        "Each sets one option of the chosen executor; one it does not have is an error.",
        (
            "max-tokens",
            "temperature",
            "price-file",
            "base-url",
            "batch",
            "fixed-concurrency",
            "claude-bin",
            "max-turns",
            "trigger-model",
            "allowed-tools",
            "unsandboxed-bash",
            "mock-outputs",
            "mock-rules",
        ),
    ),
    (
        "Execution",
        "Where and how attempts run.",
        ("runner", "ray-address", "concurrency", "max-retries", "shard", "jail", "no-jail"),
    ),
    (
        "Judging",
        "Model-graded judges.",
        ("judge-executor", "judge-model", "judge-cache-dir", "no-judge-cache", "evaluators-dir"),
    ),
    (
        "Decision",
        "How attempts become a verdict.",
        (
            "pass-k",
            "samples",
            "policy",
            "margin",
            "min-delta",
            "early-stop",
            "budget",
            "eval-threshold",
            "min-pass-rate",
            "max-error-rate",
        ),
    ),
    (
        "Records",
        "What is written and kept.",
        (
            "state-root",
            "output",
            "summary",
            "resume",
            "keep-workspaces",
            "baseline-cache-dir",
            "baseline-ttl",
            "journal-key",
            "max-preview-chars",
            "max-output-bytes",
        ),
    ),
    (
        "Cost",
        "What the run will cost, said before it runs, and caps on it (references/cost.md).",
        ("dry-run", "max-cost-usd", "max-tokens-total"),
    ),
    (
        "Console and config",
        "Progress display and the project config file.",
        ("quiet", "config", "no-config"),
    ),
)
HIDDEN = ("backend",)  # deprecated names, accepted and not shown
# `run`'s own flags over skill folders (cli/skills_run.py): not in the run plan, and not
# flags of scripts/evaluate.py.
RUN_ONLY = ("changed-since", "evals-from", "allow-unjudged", "summary", "dry-run")


# scripts/evaluate.py's contract keeps the original tool's defaults: the skill prepended to
# the task, the `delta` policy, --state-root required, --standalone written out, no config.
COMPATIBILITY: dict[str, dict[str, Any]] = {
    "task-suite": {"required": True, "help": "Task suite YAML (always required)."},
    "skill-mode": {"default": "prepend"},
    "policy": {"default": "delta"},
    "state-root": {
        "required": True,
        "help": "Directory for runs and artifacts; created if missing.",
    },
    "standalone": {"help": "Evaluate a skill directly, no ranking artifact."},
}


def attributes(name: str, **overrides: Any) -> dict[str, Any]:
    """Flag `name`'s click attributes with its help, `overrides` applied. A required flag
    has no default (click 8.3 takes an explicit default=None as a value: required would
    then never fire)."""
    attrs = {**FLAGS[name][1], "help": HELP[name], **overrides}
    if attrs.get("required"):
        attrs.pop("default", None)
    if callable(attrs["help"]):
        attrs["described"], attrs["help"] = attrs["help"], None
    return attrs


def _grouped(attrs: dict[str, Any]) -> dict[str, Any]:
    """`attrs` for an option in a help section: a RegistryHelp one as GroupedRegistryHelp."""
    return {**attrs, "cls": GroupedRegistryHelp} if "described" in attrs else attrs


def flag(name: str, *, section: OptionGroup | None = None, **overrides: Any) -> Decorator:
    """The option `name` for another command: in `section` of its help, else a plain click
    option. `overrides` may change its help, default or requiredness, not what it is."""
    attrs = attributes(name, **overrides)
    if section is not None:
        return section.option(*FLAGS[name][0], **_grouped(attrs))
    if "described" in attrs:
        attrs["cls"] = RegistryHelp
    return click.option(*FLAGS[name][0], **attrs)


def run_flags(*, compatibility: bool = False) -> Decorator:
    """Every flag of `skill-eval run`, in the sections of SECTIONS. `compatibility`: the
    variant of scripts/evaluate.py (see COMPATIBILITY; no --config / --no-config)."""
    overrides = COMPATIBILITY if compatibility else {}
    # the original tool's contract has two arms: --arm is skill-eval run's
    skipped = {"config", "no-config", "arm", "reference-arm", *RUN_ONLY} if compatibility else set()

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for name in HIDDEN:
            func = flag(name)(func)
        for title, text, names in reversed(SECTIONS):
            if compatibility and title == "Console and config":
                title, text = "Console", "Progress display."
            group = OptionGroup(title, help=text)
            for name in reversed([n for n in names if n not in skipped]):
                attrs = _grouped(attributes(name, **overrides.get(name, {})))
                func = group.option(*FLAGS[name][0], **attrs)(func)
        return func

    return decorate


__all__ = ["FLAGS", "SECTIONS", "attributes", "flag", "run_flags"]
