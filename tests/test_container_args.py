"""The container providers' `run` arguments as pure functions (jail/container.py for Podman,
jail/docker.py for Docker), table-tested in milliseconds on any host: no network but what the
confinement asks, a read-only root, no capabilities, no /dev/shm, the caps as flags, the
command last behind `env -i` (its environment the confinement's alone) and the jail's seccomp
filter. The attack tests (tests/test_jail_session.py) prove the same on a real runtime where
one runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from skill_eval.jail import Confinement, Limits, Mount, container, docker

Build = Callable[[Confinement], list[str]]
BUILDERS: dict[str, Build] = {
    "container": lambda c: container.run_args(c, 3, "jail-x", None, "img"),
    "docker": lambda c: docker.run_args(c, "jail-x", "img", 3, "python3", False),
}


def _values(args: list[str], flag: str) -> list[str]:
    """Every value given to `flag` (`--flag VALUE`) before the image."""
    head = args[: args.index("img")]
    return [head[i + 1] for i, arg in enumerate(head[:-1]) if arg == flag]


def _confinement(**changes: object) -> Confinement:
    base = {
        "argv": ("/bin/sh", "-c", "echo hi"),
        "cwd": "/workspace",
        "env": {"HOME": "/home/agent", "PATH": "/usr/bin"},
        "mounts": (Mount("tmpfs", "/workspace"), Mount("ro", "/fixtures", Path("/src"))),
    }
    return Confinement(**{**base, **changes})  # type: ignore[arg-type]


@pytest.mark.parametrize("provider", sorted(BUILDERS))
@pytest.mark.parametrize(
    ("changes", "flag", "expected"),
    [
        ({}, "--network", ["none"]),
        ({"network": True}, "--network", ["host"]),
        ({}, "--ipc", ["none"]),
        ({}, "--cap-drop", ["ALL"]),
        ({}, "--user", None),  # set, to an unprivileged uid (below)
        ({"limits": Limits(processes=37)}, "--pids-limit", ["37"]),
        ({"limits": Limits(total_memory_mb=300)}, "--memory", ["300m"]),
        ({"limits": Limits(total_memory_mb=None)}, "--memory", []),
        ({}, "--workdir", ["/workspace"]),
    ],
)
def test_each_confinement_becomes_its_flags(
    provider: str, changes: dict[str, object], flag: str, expected: list[str] | None
) -> None:
    args = BUILDERS[provider](_confinement(**changes))
    found = _values(args, flag)
    if expected is None:
        assert found and not found[0].startswith("0"), found  # never root
    else:
        assert found == expected
    assert "--read-only" in args and "--rm" in args
    assert "no-new-privileges" in _values(args, "--security-opt")
    assert "--privileged" not in args


@pytest.mark.parametrize("provider", sorted(BUILDERS))
def test_the_command_comes_last_with_its_environment_alone_and_under_the_filter(
    provider: str,
) -> None:
    confinement = _confinement(limits=Limits(memory_mb=256))
    args = BUILDERS[provider](confinement)
    tail = args[args.index("/usr/bin/env") :]
    assert tail[:4] == ["/usr/bin/env", "-i", "HOME=/home/agent", "PATH=/usr/bin"]
    assert tail[-3:] == ["/bin/sh", "-c", "echo hi"]
    assert f"--as={256 * 1024 * 1024}:{256 * 1024 * 1024}" in tail  # RLIMIT_AS, by prlimit
    screened = " ".join(args)
    assert "confine.py --jail --" in screened  # the seccomp filter before the command


# How each runtime's CLI spells a size-capped tmpfs at /workspace and /src shown read-only.
MOUNTS = {
    "container": ("/workspace:rw,size=5242880,", "/src:/fixtures:ro"),
    "docker": (
        "/workspace:rw,exec,nosuid,nodev,size=5242880,",
        "type=bind,src=/src,dst=/fixtures,readonly",
    ),
}


@pytest.mark.parametrize("provider", sorted(BUILDERS))
def test_a_tmpfs_is_capped_and_a_host_path_read_only(provider: str) -> None:
    args = BUILDERS[provider](_confinement(limits=Limits(disk_mb=5)))
    tmpfs, bind = MOUNTS[provider]
    assert any(arg.startswith(tmpfs) for arg in args), args
    assert bind in args
