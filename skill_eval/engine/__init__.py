"""The run engine: prepare, open, evaluate and finish one run; the runner and its jobs, the
journal, run folders, workspaces, fingerprints, the baseline cache, shards, merge and rejudge,
and the artifact."""
