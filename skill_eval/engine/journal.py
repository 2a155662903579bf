"""A run's journal (`attempts.jsonl`): one JSON line per finished attempt, flushed and fsynced,
each signed with the journal key (engine/journal_key.py), so what `--resume`, `merge` and
`rejudge` read back is what the harness wrote, never what judged code could have written.

The first line is a header `{"record": "journal", "journal_id": ..., "key_id": ..., "mac": ...}`.
Every later line carries `mac`: HMAC-SHA256 over the journal's id, the previous line's MAC and
the record itself, so a record edited, inserted, reordered, repeated or copied in from another
journal fails, and the reader names the file and line. An attempt appears once, or again after
a record of it that ended in error (the rerun of `--resume`). A torn last line (a kill mid-write)
is no record and is skipped; the chain goes on from the record before it. A journal cut short
loses its last records: `--resume` runs them again, `merge` calls the shard unfinished.

The journal also keeps in memory every attempt it read or wrote (`recorded`): the baseline
cache is filled from there, never from the file again.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..core.blobs import DEFAULT_MAX_PREVIEW_CHARS, BlobStore
from ..core.model import Attempt
from ..errors import JournalError
from .attempt_store import store_attempt
from .journal_key import JournalKey

JOURNAL_NAME = "attempts.jsonl"
HEADER = "journal"  # the `record` kind of the header line
JOURNAL_VERSION = 1
Key = tuple[str, str, int]


@dataclass(frozen=True)
class _Chain:
    """Where the signed chain of a journal stands: its id and the last line's MAC."""

    journal_id: str
    last_mac: str


class Journal:
    """Append-only, signed JSON-lines record of finished attempts. Long outputs (and
    transcripts) go to the run's blob store beside it (`blobs/<sha256>`) and the record keeps a
    preview of `max_preview_chars` characters (engine/attempt_store.py). A line with a `record`
    key is a note about the run, not an attempt (a sent Message Batch: `note`, `notes`).
    `key` signs and checks the lines; None: this process's own key (a journal only this
    process reads back)."""

    def __init__(
        self,
        path: Path,
        max_preview_chars: int = DEFAULT_MAX_PREVIEW_CHARS,
        key: JournalKey | None = None,
    ) -> None:
        self.path = path
        self.store = BlobStore(path.parent)
        self.max_preview_chars = max_preview_chars
        self.key = key or JournalKey.process()
        self._lock = threading.Lock()
        self._handle: IO[str] | None = None
        self._chain: _Chain | None = None
        self._attempts: dict[Key, Attempt] = {}
        self._notes: list[dict[str, Any]] = []

    def read(self) -> list[Attempt]:
        """The attempts recorded on disk (the last record of each), every line checked; a
        JournalError naming the file and line when one was not written by the harness."""
        with self._lock:
            self._load()
            return list(self._attempts.values())

    def recorded(self) -> list[Attempt]:
        """The attempts this journal holds, as read from disk and appended since, without
        reading the file again (the baseline cache is filled from these)."""
        with self._lock:
            return list(self._attempts.values())

    def saved(self) -> list[Attempt]:
        """Close the journal and read its attempts back from disk, as --resume will: an
        interrupt can land between a record's write and its bookkeeping in memory."""
        self.close()
        return Journal(self.path, self.max_preview_chars, self.key).read()

    def notes(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The notes (of one kind: `{"record": kind, ...}`), in the order written."""
        with self._lock:
            self._load()
            return [dict(n) for n in self._notes if kind in (None, n["record"])]

    def note(self, record: Mapping[str, Any]) -> None:
        """Write a note (a mapping with a `record` kind) at once, flushed and fsynced."""
        if "record" not in record or record["record"] == HEADER:
            raise ValueError("a journal note needs a 'record' kind other than 'journal'")
        note = dict(record)
        with self._lock:
            self._write(note)
            self._notes.append(note)

    def append(self, attempt: Attempt) -> Attempt:
        """Record `attempt` (its blobs first, so a record never names a missing blob); returns
        it as recorded: previews in place of long output and transcript."""
        attempt = store_attempt(attempt, self.store, self.max_preview_chars)
        with self._lock:
            self._write(attempt.to_dict())
            self._attempts[(attempt.arm, attempt.task_id, attempt.index)] = attempt
        return attempt

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None

    # -- inside the lock ------------------------------------------------------------------

    def _write(self, record: dict[str, Any]) -> None:
        if self._handle is None:
            self._load()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = self.path.open("a", encoding="utf-8")
            self._repair_tail()
            if self._chain is None:
                journal_id = secrets.token_hex(16)
                header = {
                    "record": HEADER,
                    "version": JOURNAL_VERSION,
                    "journal_id": journal_id,
                    "key_id": self.key.key_id,
                }
                self._chain = _Chain(journal_id, "")
                self._put(header)
        self._put(record)

    def _put(self, record: dict[str, Any]) -> None:
        """Sign `record` as the chain's next line and write it, flushed and fsynced."""
        assert self._handle is not None and self._chain is not None
        # Signed as a reader will parse it back (tuples become lists, and so on).
        parsed = json.loads(json.dumps(record, ensure_ascii=False))
        mac = self.key.sign(self._chain.journal_id, self._chain.last_mac, parsed)
        self._handle.write(json.dumps({**parsed, "mac": mac}, ensure_ascii=False) + "\n")
        self._handle.flush()
        try:
            os.fsync(self._handle.fileno())
        except OSError:
            pass
        self._chain = _Chain(self._chain.journal_id, mac)

    def _repair_tail(self) -> None:
        # A kill mid-write can leave a line without its newline; start ours on a fresh line.
        if self._handle is None:
            return
        size = self.path.stat().st_size
        if size:
            with self.path.open("rb") as handle:
                handle.seek(size - 1)
                if handle.read(1) != b"\n":
                    self._handle.write("\n")

    def _load(self) -> None:
        """Read and check the file once (the first read or write); later reads are served
        from memory, which holds everything this object appended since."""
        if self._chain is not None or not self.path.exists():
            return
        attempts: dict[Key, Attempt] = {}
        notes: list[dict[str, Any]] = []
        chain: _Chain | None = None
        for number, data in _lines(self.path):
            where = f"{self.path}:{number}"
            mac = data.pop("mac", None)
            if chain is None:
                chain = _header(where, data, mac, self.key)
                continue
            if not self.key.verifies(mac, chain.journal_id, chain.last_mac, data):
                raise JournalError(
                    f"{where}: this record fails its MAC: the harness did not write it here "
                    "(edited, inserted, moved, or copied from another journal); the run's "
                    "records cannot be trusted",
                    path=str(self.path),
                )
            chain = _Chain(chain.journal_id, str(mac))
            if "record" in data:
                notes.append(data)
                continue
            attempt = _attempt(where, data, self.path.parent)
            key = (attempt.arm, attempt.task_id, attempt.index)
            if key in attempts and attempts[key].status != "error":
                raise JournalError(
                    f"{where}: attempt {'/'.join(map(str, key))} is recorded twice; the run's "
                    "records cannot be trusted",
                    path=str(self.path),
                )
            attempts[key] = attempt
        self._chain, self._attempts, self._notes = chain, attempts, notes


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each line that parses as a JSON object; a torn line (a kill
    mid-write) does not and is skipped."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict):
                yield number, data


def _header(where: str, data: dict[str, Any], mac: object, key: JournalKey) -> _Chain:
    journal_id = data.get("journal_id")
    if data.get("record") != HEADER or not isinstance(journal_id, str):
        raise JournalError(
            f"{where}: no signed journal header: this journal was written by a skill-eval "
            "from before journal MACs, or not by skill-eval; its records cannot be trusted. "
            "Start a new run (and run the shards again) with this version",
            path=where.rsplit(":", 1)[0],
        )
    if data.get("key_id") != key.key_id:
        raise JournalError(
            f"{where}: signed with another journal key (key id {data.get('key_id')}; "
            f"{key.source} has key id {key.key_id}): pass --journal-key with the key file "
            "this run was made with (from Python: Journal(..., key=JournalKey.from_file(...)))",
            path=where.rsplit(":", 1)[0],
        )
    if not key.verifies(mac, journal_id, "", data):
        raise JournalError(
            f"{where}: the journal header fails its MAC; the run's records cannot be trusted",
            path=where.rsplit(":", 1)[0],
        )
    return _Chain(journal_id, str(mac))


def _attempt(where: str, data: dict[str, Any], blob_root: Path) -> Attempt:
    try:
        return Attempt.from_dict(data, blob_root=blob_root)
    except (ValueError, KeyError, TypeError) as exc:  # signed, so ours: another version's
        raise JournalError(
            f"{where}: a record this version cannot read ({type(exc).__name__}: {exc})",
            path=where.rsplit(":", 1)[0],
        ) from None
