"""The click options of `skill-eval run`, built from the one table of its flags
(cli/flag_table.py, cli/flag_table_how.py: each flag's name, help, declarations, attributes
and section of `run --help`). scripts/evaluate.py takes the same set (`run_flags`);
`improve` and `review` take whole sections of them (`shared_flags`, handed to
RunPlan.from_flags by `plan_flags`), and any command one flag (`flag(name, ...)`), which may
change the help text or default but not what the flag is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from click_option_group import GroupedOption, OptionGroup

from .flag_table import WHAT, Flag, Section
from .flag_table_how import HIDDEN, HOW

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


class RegistryHelp(click.Option):
    """An option whose help names executors (a function in the flag table): read from the
    registry when the help is shown, not when the CLI is imported (as RegistryChoice)."""

    def __init__(self, *args: Any, described: Callable[[], str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.described = described

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = self.described()
        return super().get_help_record(ctx)


class GroupedRegistryHelp(RegistryHelp, GroupedOption):
    """RegistryHelp for an option in a section of the help (click-option-group)."""


# Every flag by name, from the one table (cli/flag_table.py, cli/flag_table_how.py), and the
# sections of `run --help` as (title, help, names).
TABLE: tuple[Section, ...] = (*WHAT, *HOW)
FLAGS: dict[str, Flag] = {f.name: f for section in TABLE for f in section.flags} | {
    f.name: f for f in HIDDEN
}
SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = tuple(
    (section.title, section.help, tuple(f.name for f in section.flags)) for section in TABLE
)
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
    attrs = {**FLAGS[name].attrs, "help": FLAGS[name].help, **overrides}
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
        return section.option(*FLAGS[name].decls, **_grouped(attrs))
    if "described" in attrs:
        attrs["cls"] = RegistryHelp
    return click.option(*FLAGS[name].decls, **attrs)


def run_flags(*, compatibility: bool = False) -> Decorator:
    """Every flag of `skill-eval run`, in the sections of SECTIONS. `compatibility`: the
    variant of scripts/evaluate.py (see COMPATIBILITY; no --config / --no-config)."""
    overrides = COMPATIBILITY if compatibility else {}
    # the original tool's contract has two arms: --arm is skill-eval run's
    skipped = {"config", "no-config", "arm", "reference-arm", *RUN_ONLY} if compatibility else set()

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for hidden in HIDDEN:  # deprecated names, accepted and not shown
            func = flag(hidden.name)(func)
        for title, text, names in reversed(SECTIONS):
            if compatibility and title == "Console and config":
                title, text = "Console", "Progress display."
            group = OptionGroup(title, help=text)
            for name in reversed([n for n in names if n not in skipped]):
                attrs = _grouped(attributes(name, **overrides.get(name, {})))
                func = group.option(*FLAGS[name].decls, **attrs)(func)
        return func

    return decorate


def section_flags(*titles: str, skip: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The flags of these sections of `run --help` (by title), less `skip`."""
    wanted = {title: names for title, _, names in SECTIONS}
    return tuple(n for t in titles for n in wanted[t] if n not in skip and n not in RUN_ONLY)


def shared_flags(*titles: str, skip: tuple[str, ...] = ()) -> Decorator:
    """These sections of `run`'s flags, as they are, for a command that runs evaluations
    of its own (improve, review): the same flags, help and sections, so a run setting reaches
    every command that evaluates (`plan_flags` hands them to RunPlan.from_flags)."""
    names = section_flags(*titles, skip=skip)

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for title, text, section_names in reversed(SECTIONS):
            if title not in titles:
                continue
            group = OptionGroup(title, help=text)
            for name in reversed([n for n in section_names if n in names]):
                func = group.option(*FLAGS[name].decls, **_grouped(attributes(name)))(func)
        return func

    return decorate


def python_name(name: str) -> str:
    """Flag `name`'s parameter name (what click passes and RunPlan.from_flags takes)."""
    decls = FLAGS[name].decls
    plain = [d for d in decls if not d.startswith("-")]
    return plain[0] if plain else decls[0].lstrip("-").replace("-", "_")


def plan_flags(kwargs: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """The values of flags `names` taken out of a command's `kwargs`, by the names
    RunPlan.from_flags takes (--executor-option as `executor_options`)."""
    taken = {python_name(name): kwargs.pop(python_name(name)) for name in names}
    if "executor_option" in taken:
        taken["executor_options"] = taken.pop("executor_option")
    return taken


__all__ = [
    "FLAGS",
    "SECTIONS",
    "attributes",
    "flag",
    "plan_flags",
    "python_name",
    "run_flags",
    "section_flags",
    "shared_flags",
]
