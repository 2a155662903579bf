"""Big outputs stored once: a content-addressed store (`<dir>/blobs/<sha256>`) for attempts'
full outputs (and large transcripts), the preview the journal and the artifact carry instead,
and the cut at --max-output-bytes that keeps a runaway output from reaching the judges whole.

    text, ref = measure(executor_output, max_bytes)   # once per attempt: cut, size, sha256
    store = BlobStore(run_dir); store.put_text(text, ref.sha256)   # "blobs/<sha256>"
    preview(text, 4000, "blobs/<sha256>")     # first and last 2000 characters, cut marked

An output of at most `max_preview_chars` characters stays inline in full (it is its own
preview) and gets no blob; a longer one is written to the store and recorded as its preview
plus `output_size`, `output_sha256` and `output_blob` (relative to the run directory).
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from .paths import atomic_write

BLOBS_DIR = "blobs"
DEFAULT_MAX_PREVIEW_CHARS = 4000
DEFAULT_MAX_OUTPUT_BYTES = 10 * 1024 * 1024
# A transcript (its JSON) above this is stored as a blob; the record keeps its first and last
# calls. Tool calls are already trimmed one by one (core/transcript.py), so only long runs get here.
TRANSCRIPT_INLINE_BYTES = 64 * 1024
TRANSCRIPT_PREVIEW_CALLS = 10  # first and last, each


@dataclass(frozen=True)
class OutputRef:
    """How an attempt's output is recorded: its UTF-8 size and sha256 (of the text judged),
    the blob holding it when the record carries only a preview (`blobs/<sha256>`, relative to
    the run directory; None: the record holds it in full), and the size the executor returned
    when it was cut at --max-output-bytes."""

    sha256: str
    size: int
    blob: str | None = None
    cut_from: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"output_size": self.size, "output_sha256": self.sha256}
        if self.blob is not None:
            out["output_blob"] = self.blob
        if self.cut_from is not None:
            out["output_cut_from"] = self.cut_from
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OutputRef | None:
        """The ref in an attempt record; None for records written before outputs had one."""
        sha, size = data.get("output_sha256"), data.get("output_size")
        if not is_sha256(sha) or not isinstance(size, int):
            return None  # measured again from the text: a record's word is not a file name
        blob = data.get("output_blob")
        cut = data.get("output_cut_from")
        return cls(
            sha,
            size,
            blob if blob == blob_path(sha) else None,
            cut if isinstance(cut, int) else None,
        )


@dataclass(frozen=True)
class TranscriptRef:
    """A transcript stored as a blob (its JSON list of tool calls): size, sha256, where, and
    how many calls it has (the record keeps only the first and last ones)."""

    sha256: str
    size: int
    blob: str
    calls: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "transcript_size": self.size,
            "transcript_sha256": self.sha256,
            "transcript_blob": self.blob,
            "transcript_calls": self.calls,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TranscriptRef | None:
        sha, size, blob, calls = (
            data.get(f"transcript_{k}") for k in ("sha256", "size", "blob", "calls")
        )
        if not (
            is_sha256(sha)
            and isinstance(size, int)
            and blob == blob_path(sha)
            and isinstance(calls, int)
        ):
            return None
        return cls(sha, size, blob, calls)


def is_sha256(value: object) -> TypeGuard[str]:
    """64 lowercase hex digits: the only names a blob may have, so a record from elsewhere
    (a journal, a cache entry, a shard) can never point a reader or a writer at another file."""
    return (
        isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)
    )


def blob_path(sha256: str) -> str:
    if not is_sha256(sha256):
        raise ValueError(f"not a sha256: {sha256!r}")
    return f"{BLOBS_DIR}/{sha256}"


def read_checked(path: Path, sha256: str) -> bytes:
    """A blob's bytes, checked against the sha256 it is named by (a truncated or altered blob
    is as good as a missing one: FileNotFoundError, which readers report as such)."""
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise FileNotFoundError(f"{path}: its content does not match its sha256")
    return data


def cut_ingredient(max_bytes: int | None) -> dict[str, Any]:
    """The cut as an ingredient of the run fingerprint (resume, baseline cache key): a
    non-default cut changes what judges see. The default is left out, so fingerprints made
    before the cut existed still match (it changes only outputs over 10 MB)."""
    return {} if max_bytes == DEFAULT_MAX_OUTPUT_BYTES else {"max_output_bytes": max_bytes}


def cut_marker(max_bytes: int, size: int) -> str:
    return (
        f"\n\n[skill-eval: output cut at --max-output-bytes {max_bytes}; the executor "
        f"returned {size} bytes]"
    )


def measure(text: str, max_bytes: int | None = DEFAULT_MAX_OUTPUT_BYTES) -> tuple[str, OutputRef]:
    """The output as it will be judged and stored, with its ref: lone surrogates replaced, cut
    to `max_bytes` (at a character boundary, the cut marked at the end) when longer. The text
    is encoded and hashed once here; nothing else needs to hash it again."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates, which no UTF-8 file can hold
        text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        data = text.encode("utf-8")
    cut_from = None
    if max_bytes is not None and len(data) > max_bytes:
        cut_from = len(data)
        text = data[:max_bytes].decode("utf-8", "ignore") + cut_marker(max_bytes, cut_from)
        data = text.encode("utf-8")
    return text, OutputRef(hashlib.sha256(data).hexdigest(), len(data), None, cut_from)


def preview(text: str, max_chars: int, blob: str) -> str:
    """The first and last `max_chars / 2` characters of `text`, with a marker between them
    saying how much was cut and where the whole is."""
    head = max_chars // 2
    tail = max_chars - head
    cut = len(text) - head - tail
    marker = (
        f"\n\n[... skill-eval: {cut} of {len(text)} characters not shown here; the full "
        f"output is {blob} in the run directory ...]\n\n"
    )
    return text[:head] + marker + (text[-tail:] if tail else "")


class BlobStore:
    """Files named by the sha256 of their content under `<root>/blobs/`, written atomically
    (temp file + rename), each content once."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, sha256: str) -> Path:
        return self.root / blob_path(sha256)  # blob_path refuses anything but a sha256

    def has(self, sha256: str) -> bool:
        return self.path(sha256).is_file()

    def put_bytes(self, data: bytes, sha256: str | None = None) -> str:
        """Store `data` (its sha256 when the caller has it); returns `blobs/<sha256>`."""
        sha256 = sha256 or hashlib.sha256(data).hexdigest()
        if not self.has(sha256):
            self._write(sha256, lambda handle: handle.write(data))
        return blob_path(sha256)

    def put_text(self, text: str, sha256: str | None = None) -> str:
        return self.put_bytes(text.encode("utf-8"), sha256)

    def copy_from(self, other: BlobStore, sha256: str) -> str:
        """Copy a blob from another store (a cache, another run) without reading it whole."""
        if not self.has(sha256):
            with other.path(sha256).open("rb") as source:
                self._write(sha256, lambda handle: shutil.copyfileobj(source, handle))
        return blob_path(sha256)

    def read_text(self, sha256: str) -> str:
        return read_checked(self.path(sha256), sha256).decode("utf-8", "replace")

    def _write(self, sha256: str, fill: Any) -> None:
        atomic_write(self.path(sha256), fill)


def read_output(record: Mapping[str, Any], run_dir: Path | str | None) -> str:
    """An attempt record's full output: from its blob under `run_dir` when the record holds a
    preview, else the record's own `output` (older records always hold it in full). Raises
    FileNotFoundError when the blob is gone."""
    ref = OutputRef.from_dict(record)
    if ref is None or ref.blob is None:
        return str(record.get("output") or "")
    if run_dir is None:
        raise FileNotFoundError(f"{ref.blob}: the record names no run directory")
    return read_checked(Path(run_dir) / ref.blob, ref.sha256).decode("utf-8", "replace")
