"""skill-eval: measure whether a skill (SKILL.md) makes Claude do better on real tasks."""

__version__ = "0.1.0"
