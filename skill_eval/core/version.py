"""The harness version: named in every artifact's manifest and in each run's fingerprint (the
bundled evaluators and judge prompts ship with it). `skill_eval.__version__` re-exports it."""

__version__ = "0.1.0"
