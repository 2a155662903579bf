"""`--batch`, the second batch: the model-graded judgements (`llm-rubric`, `rubric`) of the
attempts the first batch answered, sent as one batch of their own before the attempts are
judged. The runner calls it after a batch-mode executor's `prepare` (ExecutorBase
`prepares_requests`), with the executor's `prepared_output`: judging is the judges' business,
so it lives here, and the executor knows nothing of judges.

The judges themselves build their requests: each such task's judge runs once on the batch's
answer with a grader that only records what it is asked (`_Recorder`, no cache). The recorded
requests go out through `send_all` (journaled as `judge-batch` notes, with the nonce of each
request, so a resumed run reads an earlier batch's text answers with the nonce they were
given); then the run's grader is wrapped in a `BatchedGrader` that answers those requests
from the batch and sends any other (a composite judge's later call, an errored request, a
tool-using attempt's judgement) to the API directly, as without --batch.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..core.model import ExecutionRequest, Task, clean_text
from ..core.work import Work
from ..executors.anthropic_api import classify_exception
from ..executors.anthropic_grader import AnthropicGrader, grade_params, reply_of
from ..executors.batches import BatchLog, BatchSession, send_all
from ..executors.grader import Grader, GradeRequest, Reply
from .base import Judge, JudgeContext, build_judge, run_judge

JUDGE_RECORD = "judge-batch"  # the journal note kind of a sent judgement batch
BATCHED_JUDGES = frozenset({"llm-rubric", "rubric"})


# Judges wrap the judged output in tags named by a fresh random token (secrets.token_hex:
# 32 hex digits in llm-rubric, 16 in rubric) each time they build a prompt: the same
# judgement asked twice differs only there. (A long hex run in an output is masked alike.)
_TOKEN = re.compile(r"[0-9a-f]{16,}")


def grade_key(request: GradeRequest) -> str:
    """A judgement's custom_id: the same judgement (its random tokens aside) gets the same id,
    in the recording pass and when the judge asks again."""
    text = _TOKEN.sub("*", json.dumps(request.to_dict(), sort_keys=True, default=str))
    return "j" + hashlib.sha256(text.encode()).hexdigest()[:40]


class _Recorder:
    """A grader that answers nothing and remembers every request."""

    name = "anthropic"

    def __init__(self) -> None:
        self.requests: dict[str, GradeRequest] = {}

    def complete(self, request: GradeRequest) -> Reply:
        self.requests.setdefault(grade_key(request), request)
        return Reply(None, "", model=request.model, error="recorded for a batch", transient=False)


class BatchedGrader:
    """Answers a judgement from the judge batch when it holds one, else asks `inner`."""

    def __init__(self, inner: Grader, answers: Mapping[str, tuple[Any, str]]) -> None:
        self.inner, self.answers, self.name = inner, dict(answers), inner.name

    def complete(self, request: GradeRequest) -> Reply:
        got = self.answers.get(grade_key(request))
        if got is None:
            return self.inner.complete(request)
        message, nonce = got
        return reply_of(message, replace(request, nonce=nonce))


def batch_judgements(
    prepared_output: Callable[[ExecutionRequest], str | None],
    outputs: Sequence[tuple[Task, ExecutionRequest]],
    judges: Mapping[str, Judge],
    ctx: JudgeContext,
    log: BatchLog,
) -> JudgeContext:
    """`ctx` with its grader answering from a judgement batch (see the module docstring);
    `ctx` itself when the grader is not the anthropic one or nothing is to be batched.
    `outputs` are (task, request) pairs; `prepared_output(request)` the batch's answer or
    None."""
    grader = ctx.grader
    if not isinstance(grader, AnthropicGrader):  # the mock's, claude-cli's: nothing to batch
        return ctx
    recorder = _Recorder()
    recording = replace(ctx, grader=recorder, cache=None)
    for task, request in outputs:
        text = prepared_output(request) if task.judge.get("type") in BATCHED_JUDGES else None
        if text is not None:
            judge = judges.get(task.id) or build_judge(task.judge)
            run_judge(judge, task, Work(text=clean_text(text)), recording)
    if not recorder.requests:
        return ctx
    nonces = {cid: r.nonce for cid, r in recorder.requests.items()}
    given = {
        str(r.get("batch_id")): r.get("nonces") or {}
        for r in log.records
        if r.get("record") == JUDGE_RECORD
    }
    params = {}
    for cid, asked in recorder.requests.items():
        params[cid] = grade_params(asked)
        params[cid].update(params[cid].pop("extra_body", {}))
    done = send_all(
        BatchSession(grader._get_client(), log, classify_exception),
        JUDGE_RECORD,
        params,
        note={"nonces": nonces},
    )
    answers = {
        cid: (got[0], given.get(got[1], {}).get(cid, nonces[cid]))
        for cid, got in done.items()
        if isinstance(got, tuple)
    }
    return replace(ctx, grader=BatchedGrader(grader, answers))


__all__ = ["BATCHED_JUDGES", "JUDGE_RECORD", "BatchedGrader", "batch_judgements", "grade_key"]
