"""Evaluator skills: rubrics written as Markdown SKILL.md files with weighted dimensions, the
places they are loaded from, how a task gets one, and the severity-aware scoring maths.

The `rubric` judge (skill_eval/judges/rubric.py) puts these together with one model call.
"""

from .loader import (
    Dimension,
    EvaluatorError,
    EvaluatorSkill,
    load_evaluator,
    parse_evaluator,
    validate_evaluator_paths,
)
from .registry import (
    EvaluatorRegistry,
    Selection,
    Source,
    bundled_evaluators,
    evaluator_sources,
    load_registry,
    user_evaluators_dir,
)
from .scoring import DimensionScore, Finding, ReplyError, adjust, decide, parse_reply

__all__ = [
    "Dimension",
    "DimensionScore",
    "EvaluatorError",
    "EvaluatorRegistry",
    "EvaluatorSkill",
    "Finding",
    "ReplyError",
    "Selection",
    "Source",
    "adjust",
    "bundled_evaluators",
    "decide",
    "evaluator_sources",
    "load_evaluator",
    "load_registry",
    "parse_evaluator",
    "parse_reply",
    "user_evaluators_dir",
    "validate_evaluator_paths",
]
