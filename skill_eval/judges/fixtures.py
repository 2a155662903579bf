"""The fixtures rule shared by judges that read files from a suite: a path must start with
`fixtures/` and resolve, after `..` and symlinks, inside `<suite dir>/fixtures/`."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from ..core.paths import inside

FIXTURES_DIR = "fixtures"


def fixture_problem(value: object, suite_dir: Path) -> str | None:
    """Why `value` is not an acceptable fixture path for the suite in `suite_dir`, or None.

    Rejects absolute paths, anything not under `fixtures/`, `..` or symlink escapes (checked on
    the resolved path, not the string) and files that do not exist."""
    if not isinstance(value, str) or not value.strip():
        return "must be a non-empty path under fixtures/"
    if value.startswith(("/", "\\")) or Path(value).is_absolute() or ":" in value[:3]:
        return f"must be a path relative to the suite directory, not absolute: {value!r}"
    parts = PurePosixPath(value.replace("\\", "/")).parts
    if not parts or parts[0] != FIXTURES_DIR:
        return f"must start with {FIXTURES_DIR}/: {value!r}"
    root = suite_dir / FIXTURES_DIR
    target = suite_dir / value
    if not inside(root, target):
        return (
            f"must stay inside {FIXTURES_DIR}/ after resolving '..' and symlinks: "
            f"{value!r} leaves it"
        )
    if not target.is_file():
        return f"file not found: {value!r} (looked in {suite_dir})"
    return None


def resolve_fixture(value: str, suite_dir: Path) -> Path:
    """The real path of an accepted fixture; raises ValueError with the reason otherwise.

    Judges call this again at judge time, so a symlink swapped after load is still caught."""
    problem = fixture_problem(value, suite_dir)
    if problem is not None:
        raise ValueError(problem)
    return Path((suite_dir / value).resolve())
