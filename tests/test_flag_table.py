"""The run flags' one table (cli/flag_table.py, cli/flag_table_how.py): each flag declared once,
named as it is spelled, and the same set on both sides of the library seam, so a flag added to
the command line without its plan field (or a plan field without its flag) fails here."""

from __future__ import annotations

from skill_eval.cli.flag_table_how import HIDDEN
from skill_eval.cli.run_flags import FLAGS, RUN_ONLY, TABLE, python_name
from skill_eval.plan.flags import FLAGS as PLAN_FLAGS

# Command-line flags that are not the plan's flags: the config file's, --quiet (the plan's
# `progress`, its opposite), the deprecated --backend (read as --runner), and
# --executor-option (plan_from_flags's own `executor_options` argument).
CLI_ONLY = {"config", "no-config", "quiet", "backend", "executor-option"}
# Plan flags by another name on the command line: (CLI Python name, plan name).
RENAMED = {"input_": "input"}
# Plan flags with no command-line flag: set by the command itself.
PLAN_ONLY = {"progress", "config_file"}


def test_each_flag_is_declared_once_and_named_as_spelled() -> None:
    names = [f.name for section in TABLE for f in section.flags] + [f.name for f in HIDDEN]
    assert len(names) == len(set(names)) == len(FLAGS)
    for name, flag in FLAGS.items():
        assert f"--{name}" in flag.decls, name
        assert flag.help, name


def test_the_command_line_and_the_plan_take_the_same_flags() -> None:
    cli = {
        RENAMED.get(python_name(n), python_name(n))
        for n in FLAGS
        if n not in CLI_ONLY and n not in RUN_ONLY
    }
    assert cli == set(PLAN_FLAGS) - PLAN_ONLY
