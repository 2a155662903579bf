"""What a pull request changed, and what the base branch holds, read from git as data: argv
only (no shell), `--end-of-options` before every ref and `--` before every path, literal
pathspecs, and no file of the base read but through its blob id, bounded. A ref or path that
a pull request chose (a branch named `--output=x`, a folder named `a<!--b`) stays an argument.

    top = toplevel(Path("."))
    base = check_ref("origin/main", top)       # UsageError unless it names a commit
    changed_paths(base, top)                   # files changed since the merge base
    copy_tree(base, "skills/x/evals", dest, top)  # the base's files under a folder
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import UsageError

GIT_TIMEOUT = 60
MAX_FILES = 2000  # files copied out of one folder of the base
MAX_BYTES = 64 * 1024 * 1024  # their bytes, all together
MAX_FILE_BYTES = 16 * 1024 * 1024
_REGULAR = {"100644": 0o644, "100755": 0o755}  # symlinks (120000) and submodules never copied


def git(args: Sequence[str], cwd: Path, what: str = "git") -> bytes:
    """`git ARGS` in `cwd`, its stdout; UsageError with git's last line when it fails."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_LITERAL_PATHSPECS": "1"}
    try:
        done = subprocess.run(
            ["git", "-c", "core.fsmonitor=false", *args],
            cwd=cwd,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"{what}: cannot run git: {exc}") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines() or ["git failed"]
        raise UsageError(f"{what}: git {args[0]}: {said[-1][:300]}")
    return done.stdout


def toplevel(cwd: Path, what: str = "git") -> Path:
    """The top folder of the repository `cwd` is in."""
    return Path(git(["rev-parse", "--show-toplevel"], cwd, what).decode().strip())


def check_ref(ref: str, top: Path, what: str = "--changed-since") -> str:
    """The commit id `ref` names; UsageError for a ref that is no commit, or that could be
    read as an option or hold a control character (never handed to git as it is then)."""
    if not ref or ref.startswith("-") or any(ord(c) < 32 or c == "\x7f" for c in ref):
        raise UsageError(f"{what}: {ref!r} is not a git ref")
    asked = ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"]
    try:
        found = git(asked, top, what).decode().strip()
    except UsageError:  # --quiet: a ref that is not there fails without a word
        found = ""
    if not found:
        raise UsageError(f"{what}: {_not_here(ref, top)}")
    return found


def _not_here(ref: str, top: Path) -> str:
    """Why `ref` names nothing here, and how to fetch it: a shallow clone (actions/checkout's
    default) holds only the pull request's commit, so the base branch is the usual miss."""
    remote, _, branch = ref.partition("/")
    try:
        remotes = git(["remote"], top).decode().split()
    except UsageError:
        remotes = []
    fetch = f"git fetch {remote} {branch}" if branch and remote in remotes else "git fetch"
    return (
        f"{ref!r} is not in this checkout (no branch, tag or commit of that name here); fetch "
        f"it first (`{fetch}`), or in GitHub Actions give actions/checkout `fetch-depth: 0` "
        "(a shallow clone holds only the pull request's commit)"
    )


def changed_paths(commit: str, top: Path, what: str = "--changed-since") -> list[Path]:
    """Every file changed since the merge base of `commit` (a checked id) and HEAD: committed,
    uncommitted, or untracked (what a pull request touched); absolute paths under `top`."""
    try:
        base = git(["merge-base", "--end-of-options", commit, "HEAD"], top, what).decode().strip()
    except UsageError:  # no common history (a shallow clone): compare with the ref itself
        base = commit
    diff = ["diff", "--name-only", "--no-renames", "--no-ext-diff", "-z", base, "--"]
    names = git(diff, top, what).split(b"\0")
    names += git(["ls-files", "--others", "--exclude-standard", "-z"], top, what).split(b"\0")
    return [top / os.fsdecode(name) for name in names if name]


@dataclass(frozen=True)
class Entry:
    mode: str
    kind: str
    oid: str
    path: str  # relative to the repository's top, POSIX


def tree_entries(
    commit: str, folder: str, top: Path, what: str = "--evals-from base"
) -> list[Entry]:
    """The files of `commit` under `folder` (POSIX, relative to the top), recursively."""
    asked = ["ls-tree", "-r", "-z", "--full-tree", "--end-of-options", commit, "--", folder]
    raw = git(asked, top, what)
    entries = []
    for record in raw.split(b"\0"):
        if not record:
            continue
        head, _, name = record.partition(b"\t")
        mode, kind, oid = head.decode().split(" ")
        entries.append(Entry(mode, kind, oid, os.fsdecode(name)))
    return entries


def _blob(oid: str, top: Path, limit: int, what: str) -> bytes:
    size = int(git(["cat-file", "-s", oid], top, what).decode().strip() or 0)
    if size > limit:
        raise UsageError(f"{what}: a file of the base is over {limit} bytes")
    return git(["cat-file", "blob", oid], top, what)


def copy_tree(
    commit: str, folder: str, dest: Path, top: Path, what: str = "--evals-from base"
) -> int:
    """Write the regular files `commit` holds under `folder` into `dest` (their paths below
    `folder` kept; links and submodules left out); how many. Bounded: MAX_FILES files,
    MAX_BYTES in all; a path that would land outside `dest` is never written."""
    prefix = PurePosixPath(folder)
    budget, written = MAX_BYTES, 0
    for entry in tree_entries(commit, folder, top, what):
        if entry.kind != "blob" or entry.mode not in _REGULAR:
            continue
        relative = PurePosixPath(entry.path).relative_to(prefix)
        if relative.is_absolute() or ".." in relative.parts:
            continue
        if written >= MAX_FILES:
            raise UsageError(f"{what}: {folder} holds over {MAX_FILES} files on the base")
        data = _blob(entry.oid, top, min(MAX_FILE_BYTES, budget), what)
        budget -= len(data)
        target = dest.joinpath(*relative.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(_REGULAR[entry.mode])
        written += 1
    return written


__all__ = [
    "Entry",
    "changed_paths",
    "check_ref",
    "copy_tree",
    "git",
    "toplevel",
]
