"""Every flag of `skill-eval run`, declared once: its name, help, click declarations and
attributes, in the section of `run --help` it shows in (the sections follow the run plan's
owners: inputs, the executor and its options, execution, judging, decision, records, cost,
and the console). cli/run_flags.py builds the click options from this table, for `run`,
scripts/evaluate.py and the commands that share run's flags (improve, review, rejudge).

A help that names executors is a function, read from the registry when the help is shown
(never when the CLI is imported; cli/run_flags.py's RegistryHelp), so no list here can go
stale. A shorthand flag sets one executor option (plan/executor_options.py SHORTHANDS says
which); its help names the executors that have that option.

This module holds what a flag is and the sections of what is evaluated, on which executor
(`WHAT`); cli/flag_table_how.py the sections of how it runs, is decided, kept and paid for
(`HOW`). cli/run_flags.py reads both, in that order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..executors.base import SKILL_MODES, executor_names
from .choices import Choice, RegistryChoice, is_executor

Help = str | Callable[[], str]


@dataclass(frozen=True)
class Flag:
    """One flag: its name (the long flag without dashes), help, click declarations and
    attributes."""

    name: str
    help: Help
    decls: tuple[str, ...]
    attrs: Mapping[str, Any]


@dataclass(frozen=True)
class Section:
    """A section of `run --help`: its title, what it is about, and its flags in order."""

    title: str
    help: str
    flags: tuple[Flag, ...]


def flag(name: str, help: Help, *decls: str, **attrs: Any) -> Flag:
    return Flag(name, help, decls, attrs)


def csv_values(_ctx: Any, _param: Any, value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip()) if value else ()


def shorthand_help(setting: str, what: str, graders: bool = False) -> Callable[[], str]:
    """The help of a flag that sets one executor option (`setting`, `max_tokens=N`): the
    executors whose config has that option, and their graders with `graders`."""

    def text() -> str:
        from ..executors.catalog import executors_with_option

        names = ", ".join(executors_with_option(setting.partition("=")[0]))
        also = ", and their graders" if graders else ""
        return f"{what} Shorthand for --executor-option {setting} ({names}{also})."

    return text


def _executor() -> str:
    from ..executors.base import DEFAULT_EXECUTOR, OFFLINE_EXECUTOR

    return (
        f"How tasks run (default: {DEFAULT_EXECUTOR}; {OFFLINE_EXECUTOR}, no model calls, with "
        "--mock). Each shorthand below names the executors that have its option."
    )


WHAT: tuple[Section, ...] = (
    Section(
        "Inputs",
        "What is evaluated.",
        (
            flag(
                "task-suite",
                "Task suite YAML, or an eval set it is made from: an evals.json (skill-creator's, "
                "the agentskills.io guide's, Driftproof's) or a trigger set "
                "(references/interop.md). Required unless SKILL_DIR or --resume RUN_DIR is given.",
                "--task-suite",
                metavar="PATH",
            ),
            flag(
                "changed-since",
                "With SKILL_DIR: only the skills whose folder changed since this git ref "
                "(committed since its merge base with HEAD, uncommitted or untracked).",
                "--changed-since",
                metavar="REF",
            ),
            flag(
                "evals-from",
                "With --changed-since: `base` judges each changed skill by the evals the base ref "
                "holds for it, where it has any (a pull request cannot weaken the evals it is "
                "judged by; a new skill uses its own). Default: the skill's own.",
                "--evals-from",
                type=Choice(["head", "base"]),
                default="head",
            ),
            flag(
                "allow-unjudged",
                "With --changed-since: a changed skill with no evals at all does not fail the run "
                "(without it, such a skill is not judged, and that is not a pass).",
                "--allow-unjudged",
                is_flag=True,
            ),
            flag(
                "standalone",
                "Evaluate a skill directly, no ranking artifact (implied by --skill-path without "
                "--input).",
                "--standalone",
                is_flag=True,
            ),
            flag(
                "skill-path",
                "Standalone: the candidate skill, a SKILL.md or its directory.",
                "--skill-path",
                metavar="PATH",
            ),
            flag(
                "baseline-skill",
                "Standalone: compare against this skill instead of no skill.",
                "--baseline-skill",
                metavar="PATH",
            ),
            flag(
                "no-baseline",
                "Standalone: run the candidate alone; pass iff pass rate >= --min-pass-rate.",
                "--no-baseline",
                is_flag=True,
            ),
            flag(
                "arm",
                "Standalone, repeatable: an arm that runs the candidate skill on EXECUTOR "
                "(default: --executor) delivered as installed (its skills folder), context "
                "(CLAUDE.md / AGENTS.md), nudged (installed, and the prompt says to use it), "
                "system, prepend, or none (no skill), on MODEL after @ (default: the executor's). "
                "Two or more replace the candidate/baseline pair; each is compared with the "
                "reference arm (references/arms.md).",
                "--arm",
                "arm",
                multiple=True,
                metavar="NAME=EXECUTOR:DELIVERY[@MODEL]",
            ),
            flag(
                "reference-arm",
                "With --arm: the arm the others are compared with (default: the none arm, else "
                "the first; required with none arms on several models).",
                "--reference-arm",
                metavar="NAME",
            ),
            flag(
                "input",
                "Pipeline mode: ranking artifact from the discriminator.",
                "--input",
                "input_",
                metavar="PATH",
            ),
            flag(
                "candidate-id",
                "Pipeline mode: the candidate in scored_candidates[] to evaluate.",
                "--candidate-id",
                metavar="ID",
            ),
            flag(
                "skills-root",
                "Pipeline: an extra fence: a ranking's target.path must lie inside DIR (by "
                "default a skill anywhere is accepted).",
                "--skills-root",
                metavar="DIR",
            ),
            flag(
                "strict",
                "What the inputs leave out is an error, not a warning: --mock-outputs that do not "
                "script every arm and task of the run.",
                "--strict",
                is_flag=True,
            ),
        ),
    ),
    Section(
        "Executor",
        "The model service that runs the attempts.",
        (
            flag(
                "executor",
                _executor,
                "--executor",
                type=RegistryChoice(executor_names, is_executor),
                default=None,
            ),
            flag(
                "mock",
                "No model calls: mock executor and mock judges (offline, for CI).",
                "--mock",
                is_flag=True,
            ),
            flag(
                "model",
                "Model for the executor [env SKILL_EVAL_MODEL].",
                "--model",
                envvar="SKILL_EVAL_MODEL",
                metavar="NAME",
            ),
            flag(
                "skill-mode",
                "How the skill reaches the model: prepended to the task, as the system prompt, "
                "installed as the agent's skill (into its skills folder), or written into the "
                "agent's always-on context file (CLAUDE.md, AGENTS.md): only agent executors "
                "install or write. With --arm each arm's delivery decides.",
                "--skill-mode",
                type=Choice(SKILL_MODES),
                default="system",
                show_default=True,
            ),
            flag(
                "executor-option",
                "One of the executor's own options (repeatable); VALUE is read as YAML (3, true, "
                "[Read, Grep]) or kept as text. An unknown key lists the executor's options.",
                "--executor-option",
                "executor_option",
                multiple=True,
                metavar="KEY=VALUE",
            ),
        ),
    ),
    Section(
        "Executor option shorthands",
        "Each sets one option of the chosen executor; one it does not have is an error.",
        (
            flag(
                "max-tokens",
                shorthand_help("max_tokens=N", "Max output tokens (executor default 4096)."),
                "--max-tokens",
                type=int,
                default=None,
                metavar="N",
            ),
            flag(
                "temperature",
                shorthand_help("temperature=X", "Sampling temperature."),
                "--temperature",
                type=float,
                default=None,
                metavar="X",
            ),
            flag(
                "price-file",
                shorthand_help(
                    "price_file=FILE", "JSON/YAML price table overriding the built-in one."
                ),
                "--price-file",
                metavar="FILE",
            ),
            flag(
                "base-url",
                shorthand_help(
                    "base_url=URL",
                    "The API's base URL (for the OpenAI-style ones up to /v1, e.g. a local "
                    "http://localhost:11434/v1); no key is needed for localhost.",
                ),
                "--base-url",
                metavar="URL",
            ),
            flag(
                "batch",
                shorthand_help(
                    "batch=true",
                    "Send the attempts through the Message Batches API (half price; results in "
                    "minutes to hours); --resume polls the same batch.",
                ),
                "--batch",
                is_flag=True,
            ),
            flag(
                "fixed-concurrency",
                shorthand_help(
                    "adaptive_concurrency=false",
                    "Keep --concurrency calls at once instead of adapting (halve on 429/529, grow "
                    "by one per window of successes).",
                ),
                "--fixed-concurrency",
                is_flag=True,
            ),
            flag(
                "claude-bin",
                shorthand_help("claude_bin=PATH", "The claude binary.", graders=True),
                "--claude-bin",
                metavar="PATH",
            ),
            flag(
                "max-turns",
                shorthand_help(
                    "max_turns=N", "The agent's turn limit (Claude Code's --max-turns)."
                ),
                "--max-turns",
                type=int,
                default=None,
                metavar="N",
            ),
            flag(
                "trigger-model",
                shorthand_help(
                    "trigger_model=NAME",
                    "Model of trigger tasks' attempts (default: claude-haiku-5-5, a cheap check; "
                    "[env SKILL_EVAL_TRIGGER_MODEL]).",
                ),
                "--trigger-model",
                metavar="NAME",
            ),
            flag(
                "allowed-tools",
                shorthand_help(
                    "allowed_tools=[A,B]",
                    "Tools to offer (default: none; installed mode: Skill,Read,Glob,Grep); file "
                    "tools work inside the workspace only.",
                ),
                "--allowed-tools",
                callback=csv_values,
                metavar="A,B",
            ),
            flag(
                "unsandboxed-bash",
                shorthand_help(
                    "unsandboxed_bash=true",
                    "Offer Bash even where Claude Code's sandbox cannot run (Bash is then NOT "
                    "confined to the workspace).",
                ),
                "--unsandboxed-bash",
                is_flag=True,
            ),
            flag(
                "mock-outputs",
                shorthand_help(
                    "mock_outputs=FILE",
                    "Script the mock executor: {task_id: text} or {candidate: {...}, baseline: "
                    "{...}} (YAML or JSON); for agent tasks an output may be {text, files: {path: "
                    "content}, tools: [{name, input}]}.",
                ),
                "--mock-outputs",
                metavar="FILE",
            ),
            flag(
                "mock-rules",
                shorthand_help(
                    "mock_rules=true",
                    "Test double: unscripted answers name a task's `contains` terms only when the "
                    "skill holds its [rule:<task or category>] marker (see references/improve.md).",
                ),
                "--mock-rules",
                is_flag=True,
            ),
        ),
    ),
)


__all__ = ["WHAT", "Flag", "Help", "Section", "csv_values", "flag", "shorthand_help"]
