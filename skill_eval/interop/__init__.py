"""skill-creator interop: its `evals/evals.json` and trigger eval sets in (`skill-eval
import`), a suite back to evals.json (`skill-eval export`), and an evaluation artifact as its
`benchmark.json` (`skill-eval export-benchmark`), so its viewer opens our results.

    formats.py     read and check evals.json and trigger sets (skill-creator's shapes)
    files.py       copy input files between folders, contained (no absolute, `..`, links out)
    importer.py    evals.json (+ trigger set) -> task_suite.yaml and its files
    exporter.py    task_suite.yaml -> evals.json (+ trigger set) and its files
    benchmark.py   evaluation artifact -> benchmark.json

Import the module you need (nothing is imported here, so the CLI stays quick). Field lists
follow skill-creator's `references/schemas.md` (anthropics/skills).
"""
