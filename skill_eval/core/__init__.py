"""The records and helpers every layer shares: the data model (suites, tasks, attempts,
results), an attempt's work (output, files, transcript), paths, the blob store, the JSON-only
disk cache, the registry behind judges and executors, schema checks and the safe YAML loader.
Nothing here imports any other package of skill_eval."""
