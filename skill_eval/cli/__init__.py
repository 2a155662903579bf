"""The `skill-eval` command line. Each command parses flags, calls one library function and
prints; errors are `Error: <message>` on stderr, no traceback unless SKILL_EVAL_DEBUG=1.

Commands are imported only when used, so `skill-eval validate` never pays for the runner.
"""

from __future__ import annotations

import importlib

import click

from .common import main_entry

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

# Command name -> module in this package defining `command` (a click.Command).
# To add a command: one line here.
COMMANDS = {
    "run": "run_cmd",
    "validate": "validate_cmd",
    "cache": "cache_cmd",
    "evaluators": "evaluators_cmd",
    "report": "report_cmd",
    "rejudge": "rejudge_cmd",
    "lint": "lint_cmd",
    "show": "show_cmd",
    "compare": "compare_cmd",
    "review": "review_cmd",
    "improve": "improve_cmd",
    "import": "import_cmd",
    "export": "export_cmd",
    "export-benchmark": "export_benchmark_cmd",
    "merge": "merge_cmd",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is None:
            return None
        command: click.Command = importlib.import_module(f".{module}", __name__).command
        return command


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(package_name="skill-eval")
def cli() -> None:
    """Measure whether a skill (SKILL.md) makes Claude do better on real tasks.

    Run a task suite with a candidate skill and a baseline, judge every output and write a
    JSON verdict artifact. Start with `skill-eval run --help`.
    """


def main() -> None:
    main_entry(cli)
