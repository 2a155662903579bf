"""Model-graded judgements sent as one Message Batch (`--batch`'s second batch), behind the
grader's interface: a grader that can batch (grader.BatchGrading, the `anthropic` one) is handed
the judgements recorded for a batch (judges/batch_judging.py records them) and returns a
grader answering those from the batch and any other request as before. The batch is journaled
as `judge-batch` notes with the nonce of each request, so a resumed run reads an earlier
batch's text answers with the nonce they were given.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .anthropic_api import classify_exception
from .anthropic_grader import AnthropicGrader, grade_params, reply_of
from .batches import BatchLog, BatchSession, send_all
from .grader import Grader, GradeRequest, Reply, grade_key

JUDGE_RECORD = "judge-batch"  # the journal note kind of a sent judgement batch


class BatchedGrader:
    """Answers a judgement from the judge batch when it holds one, else asks `inner`."""

    def __init__(self, inner: Grader, answers: Mapping[str, tuple[Any, str]]) -> None:
        self.inner, self.answers, self.name = inner, dict(answers), inner.name

    def complete(self, request: GradeRequest) -> Reply:
        got = self.answers.get(grade_key(request))
        if got is None:
            return self.inner.complete(request)
        message, nonce = got
        return replace(reply_of(message, replace(request, nonce=nonce)), batch=True)


class BatchingAnthropicGrader(AnthropicGrader):
    """The `anthropic` grader, able to send recorded judgements as one Message Batch."""

    def batched(self, requests: Mapping[str, GradeRequest], log: BatchLog) -> Grader:
        nonces = {cid: r.nonce for cid, r in requests.items()}
        given = {
            str(r.get("batch_id")): r.get("nonces") or {}
            for r in log.records
            if r.get("record") == JUDGE_RECORD
        }
        params = {}
        for cid, asked in requests.items():
            params[cid] = grade_params(asked)
            params[cid].update(params[cid].pop("extra_body", {}))
        done = send_all(
            BatchSession(self._get_client(), log, classify_exception),
            JUDGE_RECORD,
            params,
            note={"nonces": nonces},
        )
        answers = {
            cid: (got[0], given.get(got[1], {}).get(cid, nonces[cid]))
            for cid, got in done.items()
            if isinstance(got, tuple)
        }
        return BatchedGrader(self, answers)


__all__ = ["JUDGE_RECORD", "BatchedGrader", "BatchingAnthropicGrader"]
