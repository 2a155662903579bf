"""Which OpenCode or Codex binary runs, what a jail must show for it, and its ripgrep.

`opencode_bin` / `codex_bin` (a path or a name on PATH) when given; else the name on PATH;
else the pinned versions `scripts/install_agents.sh` puts in a skill-eval checkout's
`.tools/agents`. Both npm packages ship native binaries: OpenCode's `bin/opencode.exe` (Bun,
self-contained), Codex's `vendor/<target>/bin/codex` behind a node launcher (`bin/codex.js`),
which is skipped, so the jail holds no node. OpenCode's skill tool needs `rg` on PATH (offline
it cannot download one): PATH's, else the one Codex's package bundles.
"""

from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path

INSTALL_HINT = (
    "install the pinned version with scripts/install_agents.sh (from a skill-eval checkout: "
    "npm, into .tools/agents), or npm install -g {package}"
)
# Codex's platform packages and the folder of its native binary in them.
_CODEX_TARGETS = {
    "x86_64": ("codex-linux-x64", "x86_64-unknown-linux-musl"),
    "aarch64": ("codex-linux-arm64", "aarch64-unknown-linux-musl"),
}


def checkout_bin() -> Path:
    """Where scripts/install_agents.sh installs by default, in this skill-eval checkout."""
    return Path(__file__).resolve().parents[3] / ".tools" / "agents" / "node_modules" / ".bin"


def find_cli(name: str, given: str | None) -> str | None:
    """The absolute path of CLI `name` ("opencode" or "codex"): `given` (a path, or a name on
    PATH), else `name` on PATH, else the checkout's pinned install."""
    wanted = given or name
    if os.sep in wanted:
        path = Path(wanted).expanduser()
        return str(path.resolve()) if path.is_file() and os.access(path, os.X_OK) else None
    found = shutil.which(wanted)
    if found or given:
        return found
    pinned = checkout_bin() / name
    return str(pinned) if pinned.is_file() and os.access(pinned, os.X_OK) else None


def not_found(name: str, package: str, given: str | None) -> str:
    """Why CLI `name` (npm `package`, `name@version` when pinned) was not found, and how to
    get it."""
    option = f"{name}_bin"
    if given:
        return f"{name} CLI not found: {given!r} (--executor-option {option}=...)"
    return (
        f"{name} CLI not found in PATH (nor in {checkout_bin()}): "
        + INSTALL_HINT.format(package=package)
        + f"; or name it with --executor-option {option}=PATH"
    )


def native(binary: str) -> str:
    """The program the jail runs for `binary`: Codex's native binary when `binary` is its
    node launcher (`@openai/codex/bin/codex.js`), else `binary` itself (its real path)."""
    real = Path(os.path.realpath(binary))
    if real.suffix != ".js":
        return str(real)
    target = _CODEX_TARGETS.get(platform.machine())
    package = real.parent.parent  # node_modules/@openai/codex
    if target is None:
        return str(real)
    for root in (package / "node_modules" / "@openai", package.parent):
        candidate = root / target[0] / "vendor" / target[1] / "bin" / "codex"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return str(real)


def program_dir(program: str) -> Path:
    """The folder a jail shows (read-only) for `program` to run."""
    return Path(program).parent


def find_rg(codex: str | None = None) -> str | None:
    """An `rg` for OpenCode: PATH's, else the one beside a Codex install (`codex` given, or
    the checkout's), else None."""
    found = shutil.which("rg")
    if found:
        return os.path.realpath(found)
    launcher = codex or find_cli("codex", None)
    if launcher is None:
        return None
    program = Path(native(launcher))
    bundled = program.parent.parent / "codex-path" / "rg"  # vendor/<target>/codex-path/rg
    return str(bundled) if bundled.is_file() and os.access(bundled, os.X_OK) else None
