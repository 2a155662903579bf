"""Where things live under --state-root, and how identifiers from input files become safe
file names (a run id of "../../etc" must never write outside the state root)."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

# --state-root when none is given (`skill-eval run`, `improve`, `review`; scripts/evaluate.py
# keeps requiring it): a dot-folder of the current directory.
DEFAULT_STATE_ROOT = ".skill-eval"
# The JSON Schemas the package ships (task suite, ranking, artifact, ...).
SCHEMAS_DIR = Path(__file__).resolve().parent.parent / "schemas"
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


def _create_new(parent: Path, prefix: str, suffix: str) -> tuple[int, str]:
    """A new file under `parent` opened for writing, mode 0666 less the umask (what `open`
    gives), unlike mkstemp's 0600: what skill-eval writes is for others to read too (a CI
    job uploads it), and no secret ever goes into it."""
    for _ in range(100):
        name = os.path.join(parent, f"{prefix}{secrets.token_hex(6)}{suffix}")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {parent}")


def fresh_dir(parent: Path, prefix: str) -> Path:
    """A new directory under `parent` (created with it), mode 0777 less the umask, unlike
    mkdtemp's 0700."""
    parent.mkdir(parents=True, exist_ok=True)
    for _ in range(100):
        path = parent / f"{prefix}{secrets.token_hex(6)}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free directory name in {parent}")


def atomic_write(path: Path, fill: Callable[[BinaryIO], object]) -> None:
    """Write a file through `fill(handle)` (binary) into a temp file beside it, fsynced, then
    renamed over `path`: readers see the old content or the new one, never half of it. The
    file's mode follows the umask, as `open` would give it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_new(path.parent, f".{path.name[:16]}.", ".tmp")
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
