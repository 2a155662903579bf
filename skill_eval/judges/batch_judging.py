"""`--batch`, the second batch: the model-graded judgements (judge types whose spec says
`batchable`: `llm-rubric`, `rubric`) of the attempts the first batch answered, sent as one
batch of their own before the attempts are judged. The runner calls it after a batch-mode
executor's `prepare` (ExecutorBase `prepares_requests`), with the executor's
`prepared_output`: judging is the judges' business, so the recording lives here, and the
executor knows nothing of judges; sending is the grader's (executors/batch_grading.py).

The judges themselves build their requests: each such task's judge runs once on the batch's
answer with a grader that only records what it is asked (`_Recorder`, no cache). A grader that
can batch (`BatchGrading`) sends the recorded requests and returns the grader the run judges
with: it answers those requests from the batch and sends any other (a composite judge's later
call, an errored request, a tool-using attempt's judgement) as without --batch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from ..core.model import ExecutionRequest, Task, clean_text
from ..core.work import Work
from ..executors.batches import BatchLog
from ..executors.grader import BatchGrading, GradeRequest, Reply, grade_key
from .base import Judge, JudgeContext, build_judge, get_judge_spec, run_judge


class _Recorder:
    """A grader that answers nothing and remembers every request."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.requests: dict[str, GradeRequest] = {}

    def complete(self, request: GradeRequest) -> Reply:
        self.requests.setdefault(grade_key(request), request)
        return Reply(None, "", model=request.model, error="recorded for a batch", transient=False)


def batch_judgements(
    prepared_output: Callable[[ExecutionRequest], str | None],
    outputs: Sequence[tuple[Task, ExecutionRequest]],
    judges: Mapping[str, Judge],
    ctx: JudgeContext,
    log: BatchLog,
) -> JudgeContext:
    """`ctx` with its grader answering from a judgement batch (see the module docstring);
    `ctx` itself when the grader cannot batch or nothing is to be batched. `outputs` are
    (task, request) pairs; `prepared_output(request)` the batch's answer or None."""
    grader = ctx.grader
    if not isinstance(grader, BatchGrading):  # the mock's, claude-cli's: nothing to batch
        return ctx
    recorder = _Recorder(grader.name)
    recording = replace(ctx, grader=recorder, cache=None)
    for task, request in outputs:
        batchable = get_judge_spec(str(task.judge.get("type"))).batchable
        text = prepared_output(request) if batchable else None
        if text is not None:
            judge = judges.get(task.id) or build_judge(task.judge)
            run_judge(judge, task, Work(text=clean_text(text)), recording)
    if not recorder.requests:
        return ctx
    return replace(ctx, grader=grader.batched(recorder.requests, log))


__all__ = ["batch_judgements"]
