"""`skill-eval improve`: the iteration engine applied to a skill (issue 12).

The loop (recall, split, evaluate, decide, refine, select on holdout, learn) lives in `loop.py`;
its evaluation and final comparison are injected callables, so the engine does not depend on
how a suite is run. See references/improve.md.
"""

from __future__ import annotations

from .decide import DECISIONS, Decided, Decision, DecisionInput, IterationSettings, decide
from .evaluation import CompareFn, EvalSummary, EvaluateFn, TaskOutcome
from .feedback import FailingTask, Feedback, build_feedback
from .folders import FolderError, read_skill_folder, write_versions, write_winner
from .improver import (
    Improver,
    MockImprover,
    Proposal,
    ProposalError,
    apply_proposal,
    build_improver_prompt,
    parse_improver_reply,
)
from .loop import ImproveResult, run_improve
from .memory import ImproveMemory, Recall, version_hash
from .ranking import build_ranking_artifact, validate_ranking
from .split import Split, split_tasks
from .versions import VersionResult

__all__ = [
    "CompareFn",
    "DECISIONS",
    "Decided",
    "Decision",
    "DecisionInput",
    "EvalSummary",
    "EvaluateFn",
    "FailingTask",
    "Feedback",
    "FolderError",
    "ImproveMemory",
    "ImproveResult",
    "Improver",
    "IterationSettings",
    "MockImprover",
    "Proposal",
    "ProposalError",
    "Recall",
    "Split",
    "TaskOutcome",
    "VersionResult",
    "apply_proposal",
    "build_feedback",
    "build_improver_prompt",
    "build_ranking_artifact",
    "decide",
    "parse_improver_reply",
    "read_skill_folder",
    "run_improve",
    "split_tasks",
    "validate_ranking",
    "version_hash",
    "write_versions",
    "write_winner",
]
