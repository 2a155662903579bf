"""The model-call side of model-graded judges: which model judges, how a grader is built, and
one structured request through the context's grader.

The grader comes from the executor registry (`ExecutorSpec.grader`: anthropic, claude-cli,
mock), built by whoever builds the `JudgeContext` (`build_grader`); a context built without
one gets the mock's. `--mock` means the mock grader: judges build their real prompt and parse
its reply.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ..core.model import JudgeResult
from ..errors import ExecutorError
from ..executors.base import CHEAP_MODEL, OFFLINE_EXECUTOR, create_grader, get_executor_spec
from ..executors.grader import (
    DEFAULT_TIMEOUT,
    SDK_MAX_RETRIES,
    Grader,
    GradeRequest,
    GraderSettings,
    Reply,
    extract_json_object,
)
from ..jail import JailKind
from .base import JudgeContext
from .judge_cache import JudgeCache, MemoryJudgeCache

# Judging is a cheap check: a Haiku-class model unless --judge-model names another.
DEFAULT_JUDGE_MODEL = CHEAP_MODEL
LLMReply = Reply  # the name judges and tests have used


def default_judge_model(env: Mapping[str, str] | None = None) -> str:
    """The model of a judge that names none: SKILL_EVAL_JUDGE_MODEL (in `env`, then the
    process environment), else DEFAULT_JUDGE_MODEL. A run plan resolves it once
    (`Judging.default_model`)."""
    return (
        (env or {}).get("SKILL_EVAL_JUDGE_MODEL")
        or os.environ.get("SKILL_EVAL_JUDGE_MODEL")
        or DEFAULT_JUDGE_MODEL
    )


def judge_model(ctx: JudgeContext, config: Mapping[str, Any] | None = None) -> str:
    """The model a judge uses: --judge-model, then the judge config's `judge_model`, then
    the context's default (the plan's `Judging.default_model`; a context built without a
    plan: `default_judge_model()`)."""
    return (
        ctx.judge_model
        or (config or {}).get("judge_model")
        or ctx.default_model
        or default_judge_model(ctx.env)
    )


def build_grader(
    backend: str, *, options: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
) -> Grader:
    """The grader of executor `backend`: `options` (judge-context style) that name a field
    of that executor's config go to the config (claude_bin, base_url, ...), with `env` when
    it has an `env` field; timeout, max_retries (the SDK's: `sdk_retries`) and record are
    GraderSettings."""
    opts = dict(options or {})
    known = {f.name for f in fields(get_executor_spec(backend).config_cls)}
    config: dict[str, Any] = {k: v for k, v in opts.items() if k in known and v is not None}
    if env is not None and "env" in known:
        config["env"] = dict(env)
    record = opts.get("record")
    settings = GraderSettings(
        timeout=float(opts.get("timeout") or DEFAULT_TIMEOUT),
        sdk_retries=int(opts.get("max_retries", SDK_MAX_RETRIES)),
        record=Path(record) if record else None,
    )
    return create_grader(backend, config, settings)


class UnavailableGrader:
    """The grader of an executor that cannot grade here (not registered in this process, or
    no grader): every judgement is a permanent judge error saying why, never a raise."""

    def __init__(self, name: str, why: str) -> None:
        self.name, self.why = name, why

    def complete(self, request: GradeRequest) -> Reply:
        return Reply(
            None, "", model=request.model, error=f"judge backend: {self.why}", transient=False
        )


def grader_or_unavailable(
    backend: str, *, options: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None
) -> Grader:
    """`build_grader`, or an UnavailableGrader when it cannot be built: for a context rebuilt
    where the run's grader may be missing (a worker, a rejudge), whose judges then say so."""
    try:
        return build_grader(backend, options=options, env=env)
    except ExecutorError as exc:
        return UnavailableGrader(backend, str(exc))


def request_structured(
    ctx: JudgeContext,
    *,
    system: str,
    prompt: str,
    schema: dict[str, Any],
    tool_name: str,
    model: str | None,
    max_tokens: int = 1024,
    temperature: float = 0.0,
) -> Reply:
    """Ask the run's grader for one JSON object shaped by `schema`; never raises."""
    model = model or judge_model(ctx)
    grader = ctx.grader
    request = GradeRequest(
        system=system,
        prompt=prompt,
        schema=schema,
        tool_name=tool_name,
        model=model,
        max_tokens=max_tokens,
        temperature=temperature,
    )
    try:
        return grader.complete(request)
    except Exception as exc:  # a plugin grader that breaks the never-raises rule
        return Reply(
            None,
            "",
            model=model,
            error=f"{grader.name} judge call failed: {type(exc).__name__}: {exc}",
            transient=False,
        )


# The first words of a verdict the mock grader gave (--mock): its PASS is no model's.
SCRIPTED = "[mock grader: a fixed answer, no model judged this]"


def said_as_scripted(result: JudgeResult, scripted: bool) -> JudgeResult:
    """`result`, and when it rests on a scripted reply (Reply.scripted) that said first in its
    details, which every report shows (the summary's feedback, `show`, markdown, HTML,
    JUnit), and `data["scripted"]`, which a cached copy keeps."""
    if not scripted:
        return result
    data = {**result.data, "scripted": True}
    return replace(result, details=f"{SCRIPTED} {result.details}".rstrip(), data=data)


@dataclass(frozen=True)
class JudgeSettings:
    """A `JudgeContext` as plain data (picklable), for a process that rebuilds it (a Ray
    worker: engine.jobs.RunSpec carries it). `grader` is the registry
    name of the executor whose grader judges, rebuilt from `backend_options` and `env` (one
    that cannot be built there makes each model-graded judgement an error saying why);
    `cache` is "memory", a judge-cache directory, or None (caching off)."""

    suite_dir: Path
    grader: str = OFFLINE_EXECUTOR
    judge_model: str | None = None
    backend_options: Mapping[str, Any] = field(default_factory=dict)
    cache: str | None = None
    env: Mapping[str, str] | None = None
    jail: JailKind = "auto"
    default_model: str | None = None

    @classmethod
    def of(cls, ctx: JudgeContext) -> JudgeSettings:
        cache = ctx.cache
        return cls(
            Path(ctx.suite_dir),
            ctx.grader.name,
            ctx.judge_model,
            dict(ctx.backend_options),
            None
            if cache is None
            else "memory"
            if cache.directory is None
            else str(cache.directory),
            dict(ctx.env) if ctx.env else None,
            ctx.jail,
            ctx.default_model,
        )

    def context(self) -> JudgeContext:
        """A new context: its own grader, and its own handle on the cache (closed by the
        caller: `JudgeContext.cache.close()`)."""
        cache = (
            None
            if self.cache is None
            else MemoryJudgeCache()
            if self.cache == "memory"
            else JudgeCache(Path(self.cache))
        )
        return JudgeContext(
            suite_dir=self.suite_dir,
            grader=grader_or_unavailable(self.grader, options=self.backend_options, env=self.env),
            judge_model=self.judge_model,
            backend_options=dict(self.backend_options),
            cache=cache,
            env=self.env,
            jail=self.jail,
            default_model=self.default_model,
        )


__all__ = [
    "JudgeSettings",
    "DEFAULT_JUDGE_MODEL",
    "LLMReply",
    "Reply",
    "UnavailableGrader",
    "build_grader",
    "default_judge_model",
    "extract_json_object",
    "grader_or_unavailable",
    "judge_model",
    "request_structured",
    "said_as_scripted",
    "SCRIPTED",
]
