"""The run plan: every setting of one evaluation, grouped by who owns it, built from flags,
the project config file and SKILL_EVAL_* variables, and checked before anything runs."""
