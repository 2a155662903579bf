"""skill-eval: measure whether a skill (SKILL.md) makes Claude do better on real tasks.

The public API for Python users. Names load on first use, so `import skill_eval` stays cheap
for the command line.

    from skill_eval import RunPlan, run_evaluation
    plan = RunPlan.from_flags(task_suite="suite.yaml", state_root="state",
                              standalone=True, skill_path="my-skill", mock=True)
    outcome = run_evaluation(plan)
    outcome.verdict, outcome.path

`RunPlan.from_flags` takes the flags of `skill-eval run` by their Python names and checks
them; the plan groups them by owner (`plan.inputs`, `.execution`, `.executor`, `.judging`,
`.decision`, `.records`; see skill_eval/plan/run_plan.py).

`evaluate(suite, arms, executor, decision=Decision(...), execution=Execution(...))` is the
entry below it, with the plan's sections as they are: any number of labelled in-memory arms,
no files written, an `EvaluationResult` back (see skill_eval/engine/evaluation.py).
"""

from __future__ import annotations

import importlib
from typing import Any

from .core.version import __version__

_EXPORTS = {
    "ArtifactError": "errors",
    "Arm": "core.model",
    "ArmComparison": "engine.summary",
    "ArmResult": "engine.summary",
    "Attempt": "core.model",
    "AttemptPolicy": "core.attempt_policy",
    "BaselineCache": "engine.cache",
    "CacheError": "errors",
    "ConfigError": "errors",
    "Decision": "stats.decision",
    "EvaluationOutcome": "engine.finish",
    "EvaluationResult": "engine.summary",
    "ExecutionRequest": "core.model",
    "ExecutionResult": "core.model",
    "Execution": "plan.run_plan",
    "Executor": "executors.base",
    "ExecutorBase": "executors.base",
    "ExecutorConfig": "executors.base",
    "ExecutorError": "errors",
    "ExecutorSpec": "executors.base",
    "Failure": "core.failure",
    "GradeRequest": "executors.grader",
    "Grader": "executors.grader",
    "Judge": "judges.base",
    "JudgeContext": "judges.base",
    "JudgeError": "errors",
    "JudgeResult": "core.model",
    "JudgeSpec": "judges.base",
    "RunInterrupted": "errors",
    "RunPlan": "plan.run_plan",
    "Skill": "core.model",
    "SkillError": "errors",
    "SkillEvalError": "errors",
    "Suite": "core.model",
    "SuiteError": "errors",
    "Task": "core.model",
    "TaskResult": "stats.results",
    "TextModel": "executors.text_model",
    "TextReply": "executors.text_model",
    "TextRequest": "executors.text_model",
    "Usage": "core.model",
    "UsageError": "errors",
    "Work": "core.work",
    "evaluate": "engine.evaluation",
    "load_ranking": "skills.ranking",
    "load_skill": "skills",
    "load_suite": "inputs.suite",
    "read_artifact": "engine.artifact",
    "register_executor": "executors.base",
    "register_judge": "judges.base",
    "run_evaluation": "engine.conductor",
}

__all__ = [
    "Arm",
    "ArmComparison",
    "ArmResult",
    "ArtifactError",
    "Attempt",
    "AttemptPolicy",
    "BaselineCache",
    "CacheError",
    "ConfigError",
    "Decision",
    "EvaluationOutcome",
    "EvaluationResult",
    "Execution",
    "ExecutionRequest",
    "ExecutionResult",
    "Executor",
    "ExecutorBase",
    "ExecutorConfig",
    "ExecutorError",
    "ExecutorSpec",
    "Failure",
    "GradeRequest",
    "Grader",
    "Judge",
    "JudgeContext",
    "JudgeError",
    "JudgeResult",
    "JudgeSpec",
    "RunInterrupted",
    "RunPlan",
    "Skill",
    "SkillError",
    "SkillEvalError",
    "Suite",
    "SuiteError",
    "Task",
    "TaskResult",
    "TextModel",
    "TextReply",
    "TextRequest",
    "Usage",
    "UsageError",
    "Work",
    "__version__",
    "evaluate",
    "load_ranking",
    "load_skill",
    "load_suite",
    "read_artifact",
    "register_executor",
    "register_judge",
    "run_evaluation",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skill_eval' has no attribute {name!r}")
    attr = "read" if name == "read_artifact" else name
    value = getattr(importlib.import_module(f".{module}", __name__), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
