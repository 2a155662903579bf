"""The `skill-eval` command line. Each command parses flags, calls one library function and
prints; errors are `Error: <message>` on stderr, no traceback unless SKILL_EVAL_DEBUG=1, and
the exit code of the error's class: the group catches them once, for every command
(common.errors_exit), so no command maps an error to an exit code.

Commands are imported only when used, so `skill-eval validate` never pays for the runner.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from ..core.validation import did_you_mean
from .common import errors_exit, main_entry

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
    "gate": "gate_cmd",
}


# Command name -> the first sentence of its help, for `skill-eval --help`: listing the commands
# must not import them (the run command alone pulls in the runner, the SDK and jsonschema).
# A command missing here is imported for its summary; tests/test_cli_startup.py checks both
# dicts agree with the commands themselves.
SUMMARIES = {
    "cache": "Inspect or empty the baseline cache.",
    "compare": "Compare two artifacts of the same suite (e.g. last week's run and today's).",
    "export": "Write a task suite as skill-creator's evals.json (the reverse of `import`).",
    "export-benchmark": "Write an evaluation artifact as skill-creator's benchmark.json, for its"
    " viewer.",
    "evaluators": "Evaluator skills: rubrics with weighted dimensions used by the `rubric` judge.",
    "gate": "The offline pull-request gate: check that the changed skills' evals are sound, with"
    " no model and no key.",
    "improve": "Improve a skill: rewrite it from the failing train tasks, propose a version only"
    " if it is shown better than the original on held-out tasks.",
    "import": "Write an eval set (skill-creator's evals.json, and the others) as a task suite.",
    "lint": "Check skills against the Agent Skills format, as `skill-eval run` does before it"
    " runs.",
    "merge": "Join the run directories of every shard of a sharded run into one artifact.",
    "rejudge": "Judge a finished run again with the suite's current judges, without re-executing.",
    "report": "Render the evaluation ARTIFACT written by `skill-eval run`, or an improve run (its"
    " directory or its ranking.json) as html or json.",
    "review": "Review a skill against its vision in four stages (orchestrator, builder, QA,"
    " visionary) and leave behind a validated suite that discriminates.",
    "run": "Run a task suite with a candidate skill and a baseline and write a verdict artifact.",
    "show": "Show a run: every task, one attempt per line with each judge's mark (✓ passed, ✗"
    " failed, ! error), score and short feedback.",
    "validate": "Validate task suites.",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's listing, from SUMMARIES instead of importing every command."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            summary = SUMMARIES.get(name)
            if summary is None:
                command = self.get_command(ctx, name)
                if command is None or command.hidden:
                    continue
                rows.append((name, command.get_short_help_str(limit)))
            else:
                rows.append((name, click.Command(name, help=summary).get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """click's, with the closest command for a typo: `No such command 'rn' (did you mean
        'run'?).`"""
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            if not ctx.resilient_parsing:
                hint = did_you_mean(name, self.list_commands(ctx))
                ctx.fail(f"No such command {name!r}{hint}.")
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command (its flags are parsed here too); our errors become exits."""
        with errors_exit():
            return super().invoke(ctx)

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
