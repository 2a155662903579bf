"""An attempt as the journal records it: its long output (and long transcript) written once to
the run's blob store and replaced by a preview, so journals, artifacts and caches stay small
while nothing is lost. Used by the journal (runner.Journal), the only writer of a run's
records, and by the baseline cache.

    stored = store_attempt(attempt, BlobStore(run_dir), max_preview_chars=4000)
    stored.output          # the output itself, or its preview when longer than 4000 chars
    stored.full_output()   # the whole output, read from <run_dir>/blobs/<sha256>
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

from ..core.blobs import (
    DEFAULT_MAX_PREVIEW_CHARS,
    TRANSCRIPT_INLINE_BYTES,
    TRANSCRIPT_PREVIEW_CALLS,
    BlobStore,
    TranscriptRef,
    measure,
    preview,
)
from ..core.model import Attempt
from ..core.transcript import trim_text, trim_value
from ..core.work import ToolCall

# The key of a baseline attempt's meta naming the run (and index) the baseline cache gave it
# from (engine/baseline_reuse.py); set by the harness alone (engine/jobs.py drops it from an
# executor's meta), absent from every attempt a run made itself.
CACHED_FROM = "cached_from"

PREVIEW_CALL_CHARS = 500  # per string of a call kept in a stored transcript's preview


def store_attempt(
    attempt: Attempt, store: BlobStore, max_preview_chars: int = DEFAULT_MAX_PREVIEW_CHARS
) -> Attempt:
    """`attempt` with its blobs in `store` and previews in place of long output/transcript.
    An attempt that already holds previews (read from a journal or a cache) has its blobs
    copied into `store` when they live elsewhere; one from before blobs (no ref) is measured
    here. Outputs of at most `max_preview_chars` characters stay inline, with no blob."""
    output, ref = attempt.output, attempt.output_ref
    if ref is None:  # an older record, or an attempt that never passed through a job
        output, ref = measure(output, None)
    if ref.blob is not None:
        _bring(attempt, store, ref.sha256)
    elif len(output) > max_preview_chars:
        ref = replace(ref, blob=store.put_text(output, ref.sha256))
        output = preview(output, max_preview_chars, ref.blob or "")
    transcript, transcript_ref = attempt.transcript, attempt.transcript_ref
    if transcript_ref is not None:
        _bring(attempt, store, transcript_ref.sha256)
    elif transcript:
        transcript, transcript_ref = _store_transcript(transcript, store)
    return replace(
        attempt,
        output=output,
        output_ref=ref,
        transcript=transcript,
        transcript_ref=transcript_ref,
        blob_root=store.root,
    )


def _bring(attempt: Attempt, store: BlobStore, sha256: str) -> None:
    """Copy a blob the attempt refers to into `store` when it lives in another one (a cached
    baseline entering a run); a blob missing at both ends stays missing (readers say so)."""
    if store.has(sha256) or attempt.blob_root is None:
        return
    source = BlobStore(attempt.blob_root)
    if source.has(sha256):
        store.copy_from(source, sha256)


def _store_transcript(
    transcript: tuple[ToolCall, ...], store: BlobStore
) -> tuple[tuple[ToolCall, ...], TranscriptRef | None]:
    """A transcript whose JSON is over TRANSCRIPT_INLINE_BYTES goes to a blob; the record
    keeps its first and last TRANSCRIPT_PREVIEW_CALLS calls (`transcript_calls` says how many
    there are)."""
    if (
        len(transcript) <= 2 * TRANSCRIPT_PREVIEW_CALLS
        and sum(len(c.output) + len(str(c.input)) for c in transcript)
        < TRANSCRIPT_INLINE_BYTES // 4
    ):
        return transcript, None  # plainly small: no need to serialise it to know
    data = json.dumps([c.to_dict() for c in transcript], ensure_ascii=False).encode("utf-8")
    if len(data) <= TRANSCRIPT_INLINE_BYTES:
        return transcript, None
    sha = hashlib.sha256(data).hexdigest()
    blob = store.put_bytes(data, sha)
    n = TRANSCRIPT_PREVIEW_CALLS
    kept = transcript if len(transcript) <= 2 * n else transcript[:n] + transcript[-n:]
    kept = tuple(
        ToolCall(
            c.name,
            trim_value(c.input, PREVIEW_CALL_CHARS),
            c.ok,
            trim_text(c.output, PREVIEW_CALL_CHARS),
        )
        for c in kept
    )
    return kept, TranscriptRef(sha, len(data), blob, len(transcript))
