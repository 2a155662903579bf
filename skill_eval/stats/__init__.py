"""From attempts to a decision: per-task results, pass@k, paired comparisons with their
intervals (exact for pass/fail tasks), the policies, what a failing run could not show,
families of candidates, group-sequential looks, the pooled baseline and adaptive allocation,
and the verdict. Pure functions: no I/O."""
