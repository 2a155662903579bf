"""skill-creator interop: eval sets and trigger sets written as a suite file (`skill-eval
import`; they are read, in any shape, by inputs/evalsets/), a suite back to evals.json
(`skill-eval export`), and an evaluation artifact as its `benchmark.json` (`skill-eval
export-benchmark`), so its viewer opens our results. And skills where they live (`run
SKILL_DIR`): their evals planned, the skill delivered as it ships.

    files.py         copy input files between folders, contained (no absolute, `..`, links out)
    importer.py      an eval set (+ trigger set) -> task_suite.yaml and its files
    exporter.py      task_suite.yaml -> evals.json (+ trigger set) and its files
    benchmark.py     evaluation artifact -> benchmark.json
    skill_runs.py    skill folders -> one evaluation per suite they hold
    delivery.py      how a skill folder run delivers the skill, and says so

Import the module you need (nothing is imported here, so the CLI stays quick). Field lists
follow skill-creator's `references/schemas.md` (anthropics/skills).
"""
