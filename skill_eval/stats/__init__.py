"""From attempts to a decision: per-task results, pass@k, paired comparisons with their
intervals, the policies, group-sequential looks and the verdict. Pure functions: no I/O."""
