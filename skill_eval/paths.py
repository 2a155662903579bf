"""Where things live under --state-root, and how identifiers from input files become safe
file names (a run id of "../../etc" must never write outside the state root)."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_component(identifier: str, max_len: int = 80) -> str:
    """A file-name component derived from an untrusted identifier. Different identifiers that
    sanitise alike get different names (a short hash is appended whenever anything changed)."""
    cleaned = _UNSAFE.sub("_", identifier).strip("._") or "_"
    cleaned = cleaned[:max_len]
    if cleaned != identifier:
        digest = hashlib.sha256(identifier.encode("utf-8")).hexdigest()[:8]
        cleaned = f"{cleaned}-{digest}"
    return cleaned


def inside(root: Path, path: Path) -> bool:
    """True when `path` (after `..` and symlinks) is `root` or below it."""
    root_real = os.path.realpath(root)
    target = os.path.realpath(path)
    return os.path.commonpath([root_real, target]) == root_real


def atomic_write_text(path: Path, text: str) -> None:
    """Write a file so that readers see the old content or the new one, never half of it."""
    atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))


def atomic_write(path: Path, fill: Callable[[BinaryIO], object]) -> None:
    """Write a file through `fill(handle)` (binary) into a temp file beside it, fsynced, then
    renamed over `path`: readers see the old content or the new one, never half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:16]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            fill(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
