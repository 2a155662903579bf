"""The `skill-eval` command line. Each command parses flags, calls one library function and
prints; errors are `Error: <message>` on stderr, no traceback unless SKILL_EVAL_DEBUG=1."""

from __future__ import annotations

import click

from .common import main_entry

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(package_name="skill-eval")
def cli() -> None:
    """Measure whether a skill (SKILL.md) makes Claude do better on real tasks.

    Run a task suite with a candidate skill and a baseline, judge every output and write a
    JSON verdict artifact. Start with `skill-eval run --help`.
    """


def _register() -> None:
    # One module per command group; each defines `command` (a click.Command).
    from . import cache_cmd, evaluators_cmd, run_cmd, validate_cmd

    for module in (run_cmd, validate_cmd, cache_cmd, evaluators_cmd):
        cli.add_command(module.command)


_register()


def main() -> None:
    main_entry(cli)
