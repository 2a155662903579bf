"""What a run is given, loaded and checked before any model call: the task suite, the checks
`validate` and `run` make on it, and the arms (which skill each arm runs)."""
