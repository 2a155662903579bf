"""`rubric`: judge an output with an evaluator skill (a Markdown rubric with weighted
dimensions) in one structured model call; the severity rules and the weighted mean are applied
in code (skill_eval.evaluators.scoring), and the whole evaluation lands in
`JudgeResult.data["evaluation"]`.

Where evaluators come from is a run-time setting: `ctx.backend_options["evaluators_dirs"]`
(the --evaluators-dir flags) and `ctx.backend_options["project_dir"]` (the directory whose
`.agents/evaluators/` is searched; default: the current directory).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from ..core.model import JudgeResult, Task, Usage
from ..core.work import Work
from ..evaluators.loader import EvaluatorError
from ..evaluators.prompt import (
    MAX_TOKENS,
    RUBRIC_PROMPT_VERSION,
    SYSTEM,
    TOOL_NAME,
    build_prompt,
    reply_schema,
)
from ..evaluators.registry import EvaluatorRegistry, RegistryCache, Selection
from ..evaluators.scoring import (
    FailOn,
    Finding,
    ParsedReply,
    ReplyError,
    decide,
    parse_reply,
    score_dimensions,
)
from .base import JudgeContext, JudgeSpec, PreflightSettings
from .judge_cache import judge_cache_key
from .llm import judge_model, request_structured, said_as_scripted
from .work_judges import describe_work

DEFAULT_THRESHOLD = 0.7
MAX_SHOWN_FINDINGS = 5
REGISTRIES = RegistryCache()
_RANK = {"blocker": 0, "important": 1, "suggestion": 2}


def evaluator_settings(ctx: JudgeContext) -> tuple[list[str], str | None]:
    """(evaluators dirs in precedence order, project directory) for this run."""
    opts = ctx.backend_options or {}
    dirs = opts.get("evaluators_dirs") or ()
    project_dir = opts.get("project_dir")
    return [str(d) for d in dirs], (str(project_dir) if project_dir else None)


def registry_for(ctx: JudgeContext) -> EvaluatorRegistry:
    dirs, project_dir = evaluator_settings(ctx)
    return REGISTRIES.get(dirs, project_dir, os.environ)


def _evaluation(
    selection: Selection,
    source: str,
    reply: ParsedReply,
    *,
    threshold: float,
    fail_on: FailOn,
    usage: Usage,
    model: str,
    backend: str,
    cached: bool,
) -> dict[str, Any]:
    skill = selection.evaluator
    score, dims = score_dimensions(skill.dimensions, reply)
    passed, verdict = decide(score, reply.findings, threshold, fail_on)
    return {
        "evaluator": {
            "name": skill.name,
            "source": source,
            "path": skill.path,
            "sha256": skill.sha256,
        },
        "selection": selection.to_dict(),
        "score": score,
        "passed": passed,
        "verdict": verdict,
        "pass_threshold": threshold,
        "fail_on": fail_on,
        "dimensions": [d.to_dict() for d in dims],
        "findings": [f.to_dict() for f in reply.findings],
        "suggestion": reply.suggestion,
        "notes": list(reply.notes),
        "usage": usage.to_dict(),
        "model": model,
        "backend": backend,
        "cached": cached,
    }


def summary(evaluation: Mapping[str, Any]) -> str:
    """A few readable lines: verdict, per-dimension scores, the worst findings, the suggestion."""
    ev = evaluation
    lines = [
        f"rubric {ev['evaluator']['name']} ({ev['evaluator']['source']}): "
        f"{'pass' if ev['passed'] else 'FAIL'}, {ev['verdict']}"
    ]
    lines.append("  " + ", ".join(f"{d['name']} {d['score']:.2f}" for d in ev["dimensions"]))
    findings = sorted(ev["findings"], key=lambda f: _RANK[f["severity"]])
    for f in findings[:MAX_SHOWN_FINDINGS]:
        where = f" ({f['location']})" if f.get("location") else ""
        lines.append(f"  [{f['severity']}] {f['id']} {f['dimension']}: {f['title']}{where}")
    if len(findings) > MAX_SHOWN_FINDINGS:
        lines.append(f"  ... and {len(findings) - MAX_SHOWN_FINDINGS} more finding(s)")
    if ev["suggestion"]:
        lines.append(f"  suggestion: {ev['suggestion']}")
    return "\n".join(lines)


def _result(evaluation: dict[str, Any]) -> JudgeResult:
    return JudgeResult(
        passed=evaluation["passed"],
        score=evaluation["score"],
        details=summary(evaluation),
        data={"evaluation": evaluation},
    )


def _reparse(evaluation: Mapping[str, Any]) -> ParsedReply:
    """A cached evaluation back into a reply (scores are the raw, clamped model scores)."""
    return ParsedReply(
        scores={d["name"]: float(d["raw_score"]) for d in evaluation["dimensions"]},
        findings=tuple(Finding(**f) for f in evaluation["findings"]),
        suggestion=str(evaluation.get("suggestion") or ""),
        notes=tuple(evaluation.get("notes") or ()),
    )


class RubricJudge:
    """Select an evaluator, ask the judge model once, score the reply in code."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.evaluator: str | None = config.get("evaluator")
        self.category: str | None = config.get("category")
        self.pass_threshold = float(config.get("pass_threshold", DEFAULT_THRESHOLD))
        self.fail_on = cast(FailOn, config.get("fail_on", "blocker"))
        self.config = dict(config)

    def judge(self, task: Task, work: Work, ctx: JudgeContext) -> JudgeResult:
        try:
            registry = registry_for(ctx)
            registry.raise_for_problems()
            selection = registry.select(self.evaluator, self.category, task.category)
        except EvaluatorError as exc:
            return JudgeResult.failure(f"rubric: {exc}")
        source = registry.source_of(selection.evaluator).kind
        return self._model_judgement(task, work, ctx, selection, source)

    def _result(
        self,
        selection: Selection,
        source: str,
        reply: ParsedReply,
        *,
        usage: Usage,
        model: str,
        backend: str,
        cached: bool,
    ) -> JudgeResult:
        return _result(
            _evaluation(
                selection,
                source,
                reply,
                threshold=self.pass_threshold,
                fail_on=self.fail_on,
                usage=usage,
                model=model,
                backend=backend,
                cached=cached,
            )
        )

    def _model_judgement(
        self, task: Task, work: Work, ctx: JudgeContext, selection: Selection, source: str
    ) -> JudgeResult:
        skill = selection.evaluator
        model = judge_model(ctx, self.config)
        backend = ctx.grader.name
        key = judge_cache_key(
            config={
                "type": "rubric",
                "evaluator": skill.name,
                "sha256": skill.sha256,
                **({"include_work": True} if self.config.get("include_work") else {}),
            },
            rubric=skill.body,
            task_prompt=task.prompt,
            work=work,
            model=model,
            backend=backend,
            prompt_version=RUBRIC_PROMPT_VERSION,
        )
        cached = ctx.cache.get(key) if ctx.cache is not None else None
        if cached is not None:
            try:
                stored = cached["data"]["evaluation"]
                again = self._result(
                    selection,
                    source,
                    _reparse(stored),
                    usage=Usage(),
                    model=stored["model"],
                    backend=backend,
                    cached=True,
                )
                return said_as_scripted(again, bool(cached["data"].get("scripted")))
            except (KeyError, TypeError, ValueError):
                pass  # an entry of another shape: judge again
        shown = describe_work(work) if self.config.get("include_work") else work.text
        prompt, _ = build_prompt(skill, task.prompt, shown)
        reply = request_structured(
            ctx,
            system=SYSTEM,
            prompt=prompt,
            schema=reply_schema(skill),
            tool_name=TOOL_NAME,
            model=model,
            max_tokens=MAX_TOKENS,
            temperature=0.0,
        )
        if reply.error is not None or reply.data is None:
            return _error(
                f"rubric: {reply.error or 'no reply'}",
                reply.raw_text,
                reply.usage,
                transient=reply.transient or reply.error is None,
            )
        try:
            parsed = parse_reply(reply.data, skill.dimensions)
        except ReplyError as exc:
            return _error(
                f"rubric: unusable reply from the judge model: {exc}", reply.raw_text, reply.usage
            )
        result = self._result(
            selection,
            source,
            parsed,
            usage=reply.usage,
            model=reply.model or model,
            backend=backend,
            cached=False,
        )
        result = said_as_scripted(result, reply.scripted)
        if ctx.cache is not None:
            ctx.cache.put(key, result.to_dict())
        return result


def _error(message: str, raw_text: str, usage: Usage, *, transient: bool = True) -> JudgeResult:
    """A judge model call that gave nothing usable: by default worth asking again."""
    return JudgeResult(
        passed=False,
        score=0.0,
        details=message,
        error=message,
        data={"raw_reply": raw_text[:4000], "usage": usage.to_dict()},
        error_kind="transient" if transient else "permanent",
    )


def rubric_config_problems(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Load-time rules past the schema. An explicit evaluator name is checked at run time
    (preflight_evaluators, or the judgement itself): --evaluators-dir is a run option."""
    if config.get("evaluator") and config.get("category"):
        return [
            ("category", "give either evaluator or category, not both (an explicit evaluator wins)")
        ]
    return []


def _check(config: Mapping[str, Any], suite_dir: Path) -> list[tuple[str, str]]:
    return rubric_config_problems(config)


def rubric_configs(judge: Any, field: str = "judge") -> list[tuple[str, Mapping[str, Any]]]:
    """Every rubric config inside a judge config (nested in composite, all, any, weighted)."""
    found: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(judge, Mapping):
        if judge.get("type") == "rubric":
            found.append((field, judge))
        elif judge.get("type") == "composite" and isinstance(judge.get("rubric"), Mapping):
            found.append((f"{field}.rubric", judge["rubric"]))
        for key, value in judge.items():
            if not (judge.get("type") == "composite" and key == "rubric"):
                found += rubric_configs(value, f"{field}.{key}")
    elif isinstance(judge, list):
        for i, value in enumerate(judge):
            found += rubric_configs(value, f"{field}[{i}]")
    return found


def preflight_evaluators(
    tasks: Sequence[Task],
    evaluators_dirs: Sequence[str | Path] = (),
    project_dir: str | Path | None = None,
) -> list[str]:
    """Before a run: every evaluator source loads cleanly and every evaluator a task names
    exists. One message per problem; empty when all is well."""
    registry = REGISTRIES.get(list(evaluators_dirs), project_dir, os.environ)
    problems = [str(p) for p in registry.problems]
    for task in tasks:
        for where, config in rubric_configs(task.judge):
            name = config.get("evaluator")
            if isinstance(name, str) and name not in registry.names():
                problems.append(
                    f"task {task.id!r}: {where}.evaluator: unknown evaluator "
                    f"{name!r}; available: {', '.join(registry.names())}"
                )
    return problems


def preflight(tasks: Sequence[Task], settings: PreflightSettings) -> list[str]:
    return preflight_evaluators(tasks, settings.evaluators_dirs, settings.project_dir)


NAME = {
    "type": "string",
    "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$",
    "errorMessage": "must be an evaluator name (lowercase letters, digits, hyphens)",
}
RUBRIC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": {"const": "rubric"},
        "evaluator": NAME,
        "category": {
            "type": "string",
            "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$",
            "errorMessage": "must be a category name (letters, digits, '_', '-')",
        },
        "pass_threshold": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "errorMessage": "must be a number between 0 and 1",
        },
        "fail_on": {
            "enum": ["blocker", "none"],
            "errorMessage": "must be 'blocker' (any blocker fails) or 'none'",
        },
        "judge_model": {"type": "string", "minLength": 1},
        "include_work": {"type": "boolean", "errorMessage": "must be true or false"},
    },
    "patternProperties": {"^x-": {}},
    "additionalProperties": False,
}

RUBRIC_SPEC = JudgeSpec(
    type="rubric",
    summary="an evaluator skill's weighted dimensions, scored by a model with graded findings",
    schema=RUBRIC_SCHEMA,
    build=RubricJudge,
    check=_check,
    preflight=preflight,
    batchable=True,
)
