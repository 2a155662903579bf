"""`skill-eval review`: a four-stage evaluator that judges a skill against its vision and
leaves behind the suite it was missing (issue 15; see references/review.md).

    goal.py      the skill, its vision and the role prompts (roles/*.md)
    models.py    RoleModel: an executor's text model (review --executor), or the mock double
    scripted.py  the built-in scripted replies of `review --mock`
    plan.py      the orchestrator's delegation plan
    draft.py     the builder's suite folder, parsed, written and validated
    qa.py        the QA seam: QAFn, by default run_evaluation in standalone mode
    qa_report.py the QA report per checklist item
    decision.py  the visionary's decision, its record (schema) and Markdown
    stages.py    the four stages; pipeline.py the rounds and the outputs
"""

from __future__ import annotations

from .decision import DECISIONS, Decision, parse_decision
from .goal import Goal, load_roles, read_goal
from .models import (
    ExecutorRoleModel,
    MockRoleModel,
    RoleModel,
    build_role_model,
    parse_models,
)
from .pipeline import ReviewOutcome, run_review
from .qa import QAFn, QAResult, TaskQA, default_qa_fn, qa_result_from_artifact
from .stages import ReviewError

__all__ = [
    "DECISIONS",
    "Decision",
    "ExecutorRoleModel",
    "Goal",
    "MockRoleModel",
    "QAFn",
    "QAResult",
    "ReviewError",
    "ReviewOutcome",
    "RoleModel",
    "TaskQA",
    "build_role_model",
    "default_qa_fn",
    "load_roles",
    "parse_decision",
    "parse_models",
    "qa_result_from_artifact",
    "read_goal",
    "run_review",
]
