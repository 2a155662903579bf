"""The key that signs a run's journal, so `--resume`, `merge` and `rejudge` take only records
the harness wrote: code the candidate controls (an agent, output code a judge runs) may reach
a journal file, never this key.

The key lives in `<state-root>/journal.key` (made on first use: 32 random bytes as hex, mode
0600), a file no jail mounts, or in the file `--journal-key` names (a CI secret shared by the
shards of one run and by the `merge` job). Every journal line carries an HMAC-SHA256 under it
(engine/journal.py says what each one covers).

    key = JournalKey.for_state_root(Path(".skill-eval"))
    key.sign(journal_id, previous_mac, record)   # hex MAC of one record
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import JournalError

KEY_FILE_NAME = "journal.key"
MIN_KEY_CHARS = 32  # `openssl rand -hex 32` gives 64
MAX_KEY_BYTES = 4096
_DOMAIN = b"skill-eval-journal-v1\0"


def canonical(record: Mapping[str, Any]) -> bytes:
    """The bytes a record's MAC covers: sorted keys, no spaces, ASCII only, so the writer and
    every reader serialise a record alike whatever its line looked like."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


@dataclass(frozen=True)
class JournalKey:
    """A journal-signing key and where it came from (for messages; the secret is never shown)."""

    secret: bytes = field(repr=False)
    source: str

    @property
    def key_id(self) -> str:
        """Names the key in a journal's header without telling anything of it."""
        return hmac.new(self.secret, b"skill-eval journal key id", hashlib.sha256).hexdigest()[:16]

    def sign(self, journal_id: str, previous: str, record: Mapping[str, Any]) -> str:
        """The MAC of `record` (without its `mac`) as line of journal `journal_id` following
        the record whose MAC is `previous` ("" for the header)."""
        message = _DOMAIN + f"{journal_id}\0{previous}\0".encode() + canonical(record)
        return hmac.new(self.secret, message, hashlib.sha256).hexdigest()

    def verifies(
        self, mac: object, journal_id: str, previous: str, record: Mapping[str, Any]
    ) -> bool:
        return isinstance(mac, str) and hmac.compare_digest(
            mac, self.sign(journal_id, previous, record)
        )

    @classmethod
    def process(cls) -> JournalKey:
        """This process's own key: what a Journal made without a key signs with. Such a
        journal can be read back by this process only."""
        return _PROCESS_KEY

    @classmethod
    def from_file(cls, path: Path) -> JournalKey:
        """The key in `path` (at least MIN_KEY_CHARS characters; surrounding whitespace is not
        part of it), or a JournalError naming the file."""
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as handle:
                if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                    raise JournalError(f"{path}: the journal key must be a regular file")
                data = handle.read(MAX_KEY_BYTES + 1)
        except OSError as exc:
            raise JournalError(
                f"{path}: cannot read the journal key: {exc.strerror or exc}", path=str(path)
            ) from None
        secret = data.strip()
        if len(data) > MAX_KEY_BYTES or len(secret) < MIN_KEY_CHARS:
            raise JournalError(
                f"{path}: a journal key is {MIN_KEY_CHARS} to {MAX_KEY_BYTES} characters "
                f"(make one with `openssl rand -hex 32`)",
                path=str(path),
            )
        return cls(secret, str(path))

    @classmethod
    def for_state_root(cls, state_root: Path) -> JournalKey:
        """The state root's key, made (0600, atomically: two runs starting at once get the
        same key) when there is none yet."""
        path = state_root / KEY_FILE_NAME
        if not os.path.lexists(path):
            _create(path)
        return cls.from_file(path)


_PROCESS_KEY = JournalKey(secrets.token_bytes(32), "this process (a journal made without a key)")


def _create(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.parent / f".{KEY_FILE_NAME}.{secrets.token_hex(6)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(secrets.token_hex(32) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temp, path)  # never replaces a key another process made meanwhile
        except FileExistsError:
            pass
    finally:
        temp.unlink(missing_ok=True)


def journal_key(explicit: str | Path | None, state_root: Path) -> JournalKey:
    """The key a command signs and checks journals with: the file `--journal-key` names, else
    the state root's own (made when there is none)."""
    if explicit:
        return JournalKey.from_file(Path(explicit))
    return JournalKey.for_state_root(state_root)


def run_dir_key(explicit: str | Path | None, run_dir: Path) -> JournalKey:
    """The key to check the journal of an existing run directory with: the file
    `--journal-key` names, else the key of the state root the directory lies in
    (`<state-root>/runs/<run>`); never a new one."""
    if explicit:
        return JournalKey.from_file(Path(explicit))
    path = run_dir.parent.parent / KEY_FILE_NAME
    if not os.path.lexists(path):
        raise JournalError(
            f"{run_dir}: no journal key at {path} to check its records with; a run made "
            "under another state root, or on another machine, is checked with the key it ran "
            "with: pass --journal-key FILE",
            path=str(run_dir),
        )
    return JournalKey.from_file(path)
