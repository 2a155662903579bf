"""The run plan: every setting of one evaluation, grouped by who owns it, built from flags,
the project config file and SKILL_EVAL_* variables, and checked before anything runs.

    run_plan.py          RunPlan and its sections (inputs, execution, executor, judging,
                         decision, records); to_dict for run.json
    kinds.py             the closed sets with no other home (mode, runner, kept workspaces)
    flags.py             RunPlan.from_flags: the flags of `skill-eval run` into sections
    checks.py            the checks on values and combinations that need nothing else
    executor_options.py  an executor's own options: --executor-option, the shorthand flags,
                         config tables, checked against the executor's schema
    config.py            [tool.skill-eval] / skill-eval.toml: flag defaults, executor tables
    stored.py            a plan read back from run.json (and the flat options of older runs)
"""
