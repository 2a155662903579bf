"""What an attempt produced, as the judges read it: the output text, the transcript of tool
calls and a snapshot of the files it changed in its workspace. Text tasks have only text.

    work = Work("# acme 2.1.0 ...")             # a text task
    work.text; work.transcript == (); work.files is None
    work.digest()                                # what the judge cache keys on
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bounded import read_bounded


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ToolCall:
    """One tool call of the agent: the tool's name, its input, and whether it succeeded."""

    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    ok: bool = True
    output: str = ""  # what the tool returned (may be truncated by the executor)
    # Whether the agent's own protocol reported the call's result: a call the model asked for
    # but that never ran (the run ended first) counts for no judge.
    completed: bool = True

    def to_dict(self) -> dict[str, Any]:
        data = {"name": self.name, "input": dict(self.input), "ok": self.ok, "output": self.output}
        return data if self.completed else {**data, "completed": False}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolCall:
        return cls(
            name=str(data["name"]),
            input=dict(data.get("input") or {}),
            ok=bool(data.get("ok", True)),
            output=str(data.get("output") or ""),
            completed=data.get("completed") is not False,
        )


# Where harness plumbing lives inside a workspace (Claude Code's project skills): never work.
# Snapshots (core/workspace.py) and the judges that list a workspace (work_judges) skip them.
IGNORED_DIRS = frozenset({".claude", ".git", "__pycache__", "node_modules"})


@dataclass(frozen=True)
class FileSnapshot:
    """One file the attempt created or changed, relative to its workspace. The content is read
    from `root` (a kept workspace) when there is one; `sha256` identifies it either way."""

    path: str  # POSIX, relative to the workspace
    size: int
    sha256: str
    root: Path | None = field(default=None, compare=False)

    def read_bytes(self) -> bytes:
        """The file's content; a FileNotFoundError once its workspace is gone, a FileTooLarge
        (an OSError) past core/bounded.MAX_FILE_BYTES: the agent wrote it, so it is never
        read whole whatever its size."""
        if self.root is None:
            raise FileNotFoundError(f"{self.path}: its workspace was not kept")
        return read_bounded(self.root / self.path)

    def read_text(self) -> str:
        return self.read_bytes().decode("utf-8", "replace")

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, "sha256": self.sha256}


@dataclass(frozen=True)
class Snapshot:
    """The changed files of a workspace, sorted by path. `root` is the workspace directory
    while it exists (None once deleted: the hashes stay, the content does not)."""

    files: tuple[FileSnapshot, ...] = ()
    root: Path | None = field(default=None, compare=False)
    truncated: bool = False  # more files changed than the snapshot holds
    # Why the workspace is not judged at all (over the files skill-eval reads); None: it is.
    problem: str | None = None

    def get(self, path: str) -> FileSnapshot | None:
        return next((f for f in self.files if f.path == path), None)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"files": [f.to_dict() for f in self.files]}
        if self.root is not None:
            out["root"] = str(self.root)
        if self.truncated:
            out["truncated"] = True
        if self.problem:
            out["problem"] = self.problem
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Snapshot:
        root = Path(data["root"]) if data.get("root") else None
        files = tuple(
            FileSnapshot(
                path=str(f["path"]),
                size=int(f.get("size") or 0),
                sha256=str(f.get("sha256") or ""),
                root=root,
            )
            for f in data.get("files") or ()
        )
        problem = data.get("problem")
        return cls(
            files=files,
            root=root,
            truncated=bool(data.get("truncated")),
            problem=str(problem) if problem else None,
        )


@dataclass(frozen=True)
class Work:
    """What one attempt produced. `transcript` is empty and `files` is None for text tasks;
    `meta` is its record's notes on how it ran."""

    text: str = ""
    transcript: tuple[ToolCall, ...] = ()
    files: Snapshot | None = None
    # sha256 of `text` when the caller already has it (blobs.measure): a 50 MB output is
    # hashed once per attempt, not again for each judge-cache key.
    text_sha256: str | None = field(default=None, compare=False)
    # What the attempt's record says about how it ran (Attempt.meta: the executor's notes, and
    # the runner's, such as which skill a trigger attempt watched for). Not part of `digest`:
    # judges that read it are not cached.
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def is_text_only(self) -> bool:
        return not self.transcript and self.files is None

    def digest(self) -> str:
        """sha256 identifying this work. For text-only work it is the sha256 of the text, so a
        judge-cache key means what it meant when judges saw only the text."""
        text_sha256 = self.text_sha256 or sha256_text(self.text)
        if self.is_text_only:
            return text_sha256
        material = {
            "text": text_sha256,
            "transcript": [c.to_dict() for c in self.transcript],
            "files": [f.to_dict() for f in self.files.files] if self.files else None,
        }
        canonical = json.dumps(
            material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        """The transcript and files only (the text is journaled as the attempt's `output`);
        empty for text-only work."""
        out: dict[str, Any] = {}
        if self.transcript:
            out["transcript"] = [c.to_dict() for c in self.transcript]
        if self.files is not None:
            out["files"] = self.files.to_dict()
        return out

    @classmethod
    def from_dict(cls, text: str, data: Mapping[str, Any] | None) -> Work:
        data = data or {}
        return cls(
            text=text,
            transcript=tuple(ToolCall.from_dict(c) for c in data.get("transcript") or ()),
            files=Snapshot.from_dict(data["files"]) if data.get("files") else None,
        )
