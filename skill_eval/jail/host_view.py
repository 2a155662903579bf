"""The host's system as every jail shows it, read-only: the system folders, a short list of
/etc files and this interpreter (a pyenv or venv wherever it lies). bubblewrap binds them;
the container runtimes mount them on an empty root (Podman's `--rootfs`, Docker's image made
from a tar of mountpoints). Never the whole /etc (shadow, machine secrets, tool configs).
"""

from __future__ import annotations

import os
import sys

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What programs read from /etc to start, resolve names and check certificates.
ETC = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "hosts",
    "nsswitch.conf",
    "host.conf",
    "gai.conf",
    "localtime",
    "passwd",
    "group",
    "mime.types",
    "os-release",
)
NETWORK_ETC = ("resolv.conf",)


def interpreter_dirs() -> list[tuple[str, str]]:
    """(host folder, path inside) pairs this Python needs that the system folders may not
    hold: a pyenv or venv anywhere on disk (even under /tmp, even reached through a link),
    each shown read-only at the path Python knows it by and at its real path."""
    found: list[tuple[str, str]] = []
    for path in (sys.base_prefix, sys.prefix, os.path.dirname(sys.executable)):
        real = os.path.realpath(path)
        for target in dict.fromkeys((os.path.abspath(path), real)):
            if not any(
                target == d or target.startswith(d + "/") for d in (*(t for _, t in found), "/usr")
            ):
                found.append((real, target))
    return found


def top_links() -> list[tuple[str, str]]:
    """(path, target) of the system folders that are links here (`/bin -> usr/bin` on a
    merged-/usr system): a jail's own root must hold the same links."""
    return [(name, os.readlink(name)) for name in SYSTEM_DIRS if os.path.islink(name)]


def system_folders() -> list[str]:
    """The system folders that are real folders here (each shown read-only at its path)."""
    return [name for name in SYSTEM_DIRS if os.path.isdir(name) and not os.path.islink(name)]


def etc_files(network: bool) -> list[str]:
    """The /etc paths a jail shows that exist here (resolv.conf only with a network)."""
    names = (*ETC, *(NETWORK_ETC if network else ()))
    return [f"/etc/{name}" for name in names if os.path.exists(f"/etc/{name}")]


__all__ = [
    "ETC",
    "NETWORK_ETC",
    "SYSTEM_DIRS",
    "etc_files",
    "interpreter_dirs",
    "system_folders",
    "top_links",
]
