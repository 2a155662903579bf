"""The jail's providers, by name: who builds the confinement a `Confinement` describes. Built-ins
are `bubblewrap` (Linux user namespaces), `container` (Podman, one container per jail),
`docker` (the Docker CLI: Docker Desktop, Colima, OrbStack, Docker Engine) and `none` (the
user's --no-jail); plugins add more through the entry-point group `skill_eval.jail_providers`
(a remote sandbox: Modal, E2B, a Kubernetes pod), subclassing `ProviderBase`. `auto` is the
first of AUTO_ORDER whose probe passes. Only this package compares a provider's name: the
rest of the harness asks `isolated(name)` and `resolve(name)`.

The contract (docs/architecture.md, "Jail providers"), ProviderBase's defaults where a
provider says nothing:

    provider.name, provider.isolated, provider.python, provider.own_cgroup
    provider.problem() -> str | None        # a probe: why it cannot run here, or None
    provider.inside_fds(fds) -> [int]      # the numbers the jail sees the harness's fds by
    provider.launch(confinement, fds, timeout) -> Launch   # its `workspace`: the channel
    provider.variant(option) -> provider    # `--jail NAME:OPTION` (an image, say)
    provider.warning() -> str | None        # what a run's artifact says of its jails
    provider.image_programs() -> bool      # programs run from its own image, by name on PATH
    provider.image_version(package) -> str | None   # an npm package's version its image holds
    provider.forget()                      # the next problem() probes again
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..core.registry import Registry
from . import Confinement, JailUnavailable

if TYPE_CHECKING:
    from .workspace_channel import WorkspaceChannel

AUTO, NONE = "auto", "none"
UNAVAILABLE = "unavailable"  # what a manifest names where no jail can run (a dry run only)
AUTO_ORDER = ("bubblewrap", "container", "docker")  # `auto` tries these, in this order


@dataclass(frozen=True)
class Launch:
    """How the harness starts one confined command: `argv` with `pass_fds` kept open,
    `move_fds` (harness fd -> number) renumbered in the child before exec, `env` and `cwd`
    of the process it starts; `own_cgroup`: the harness makes the jail's cgroup (False: the
    runtime caps it); `workspace(pid)`: the channel to the started jail's files and its end,
    given the started process's pid (None: the jail shows none; workspace_channel.py);
    `cleanup()` removes whatever the runtime left once the jail ended (a container)."""

    argv: Sequence[str]
    pass_fds: Sequence[int] = ()
    move_fds: Sequence[tuple[int, int]] = ()
    env: dict[str, str] | None = None
    cwd: str = "/"
    own_cgroup: bool = True
    workspace: Callable[[int], WorkspaceChannel | None] = lambda pid: None
    cleanup: Callable[[], None] = lambda: None


@runtime_checkable
class JailProvider(Protocol):
    """A jail provider: see the module's docstring and docs/architecture.md."""

    name: str
    isolated: bool  # False only for `none`: the command runs with the harness's rights
    python: str  # the interpreter the jail's own helpers (holder.py, pytest) run under
    own_cgroup: bool  # the harness makes its jails' cgroup (jail/cgroup.py), not a runtime

    def problem(self) -> str | None: ...

    def inside_fds(self, fds: Sequence[int]) -> list[int]: ...

    def launch(
        self, confinement: Confinement, fds: Sequence[int], timeout: float | None = None
    ) -> Launch: ...

    def variant(self, option: str) -> JailProvider: ...

    def warning(self) -> str | None: ...

    def image_warning(self, pins: Mapping[str, str]) -> str | None: ...

    def image_programs(self) -> bool: ...

    def image_version(self, package: str) -> str | None: ...

    def forget(self) -> None: ...


class ProviderBase:
    """The contract's defaults: a provider (built-in or a plugin's) subclasses this and says
    what differs. `launch` it must write."""

    name: str = ""
    isolated: bool = True
    python: str = sys.executable
    own_cgroup: bool = False

    def problem(self) -> str | None:
        return None

    def inside_fds(self, fds: Sequence[int]) -> list[int]:
        return list(fds)

    def launch(
        self, confinement: Confinement, fds: Sequence[int], timeout: float | None = None
    ) -> Launch:
        raise NotImplementedError

    def variant(self, option: str) -> JailProvider:
        """The provider `NAME:option` names (`docker:IMAGE`); none takes an option here."""
        raise JailUnavailable(
            f"--jail {self.name}:{option}: the {self.name} provider takes no option"
        )

    def warning(self) -> str | None:
        """What a run's artifact must say of the jails this provider built (a root harness
        whose jails have no process cap), or None."""
        return None

    def image_warning(self, pins: Mapping[str, str]) -> str | None:
        """What a run's artifact must say of the image its jails ran, when it runs one of its
        own (docker:IMAGE) whose npm packages are not at `pins` ({package: version}, the
        agent executors' own: ExecutorSpec.package); None otherwise."""
        return None

    def image_programs(self) -> bool:
        """Whether the jail runs programs its provider's own image holds (an agent CLI by its
        command name, on IMAGE_PATH), not the host's shown read-only: a Linux container
        cannot run a macOS binary (Docker Desktop). False: the host's (the default)."""
        return False

    def image_version(self, package: str) -> str | None:
        """The version of npm package `package` the provider's image says it holds (its
        agent_image.LABEL label), when image_programs(); None: unknown or no image."""
        return None

    def forget(self) -> None:
        """Forget what problem() found (the machine changed: a tool installed, PATH)."""


class Unjailed(ProviderBase):
    """`none`: the command as it is, in the harness's own world (--no-jail)."""

    name, isolated, own_cgroup = NONE, False, True

    def launch(
        self, confinement: Confinement, fds: Sequence[int], timeout: float | None = None
    ) -> Launch:
        return Launch(
            confinement.argv, fds, env=dict(confinement.env), cwd=confinement.cwd, own_cgroup=True
        )


UNJAILED = Unjailed()


def _coerce(value: Any) -> JailProvider:
    """What a `skill_eval.jail_providers` entry point may load: a provider, or a
    zero-argument callable (its class) returning one."""
    if isinstance(value, type) or (not isinstance(value, JailProvider) and callable(value)):
        value = value()
    if not isinstance(value, JailProvider):
        raise TypeError(
            f"expected a jail provider (a subclass of ProviderBase), got {type(value).__name__}"
        )
    return value


REGISTRY: Registry[JailProvider] = Registry(
    kind="jail provider",
    valid="valid jail providers",
    group="skill_eval.jail_providers",
    package=__package__ or "skill_eval.jail",
    builtins={
        "bubblewrap": "bubblewrap:PROVIDER",
        "container": "container:PROVIDER",
        "docker": "docker:PROVIDER",
        NONE: "providers:UNJAILED",
    },
    coerce=_coerce,
    name_of=lambda provider: provider.name,
)


def register_provider(provider: JailProvider) -> JailProvider:
    """Register a provider from code (a plugin registers through its entry point)."""
    resolve.cache_clear()
    return REGISTRY.register(provider)


def forget_probes() -> None:
    """Forget what every provider's probe found and what `auto` chose: the next run probes
    again (after the machine changed: a tool installed, PATH changed; tests use it)."""
    resolve.cache_clear()
    for name in REGISTRY.names():
        if (provider := REGISTRY.get(name)) is not None:
            provider.forget()


def _named(name: str) -> JailProvider:
    base, _, option = name.partition(":")  # `docker:IMAGE`: a provider's one option
    provider = REGISTRY.get(base)
    if provider is None:
        raise JailUnavailable(f"--jail: {REGISTRY.unknown(base)}, or auto")
    return provider.variant(option) if option else provider


@functools.cache
def resolve(name: str = AUTO) -> JailProvider:
    """The provider `name` names, able to run here (its problem() is None): for `auto` the
    first of AUTO_ORDER that can. JailUnavailable otherwise, naming why and what to do."""
    if name != AUTO:
        provider = _named(name)
        missing = provider.problem()
        if missing is not None:
            raise JailUnavailable(missing, way_out=_other_ways(provider.name))
        return provider
    problems = []
    for candidate in AUTO_ORDER:
        provider = _named(candidate)
        missing = provider.problem()
        if missing is None:
            return provider
        problems.append(missing)
    # each problem names what to install for its provider (on Linux): said once, not again
    why = f"no jail can run here ({'; '.join(problems)})" + install_hint()
    raise JailUnavailable(why, way_out=UNCONFINED)


def require(kind: str = AUTO) -> str:
    """The provider `kind` resolves to when it can run here (`auto`: the first that can);
    JailUnavailable naming what is missing otherwise."""
    return resolve(kind).name


def chosen(name: str) -> str | None:
    """What `auto` chose and why, when it passed a provider over (for the run's first lines);
    None when the first choice ran or a name was given."""
    if name != AUTO:
        return None
    provider = resolve(name)
    skipped = [
        f"{c}: {why}"
        for c in AUTO_ORDER[: AUTO_ORDER.index(provider.name)]
        if (why := _named(c).problem())
    ]
    if not skipped:
        return None
    return f"jail: auto chose the {provider.name} provider ({'; '.join(skipped)})"


def choice_line(name: str) -> str | None:
    """What a run that jails something says as it starts of the provider `auto` chose (and
    why, when it passed one over); None for a provider the user named."""
    if name != AUTO:
        return None
    said = chosen(name)
    return (
        said or f"jail: auto chose the {resolve(name).name} provider (the first that can run here)"
    )


def isolated(name: str) -> bool:
    """Whether the jail `name` confines anything: its provider's word (`auto` picks among
    isolating ones). Never probes; a name no provider has is left to `resolve` to refuse."""
    if name == AUTO:
        return True
    try:
        return _named(name).isolated
    except JailUnavailable:
        return True


def missing(name: str) -> str | None:
    """Why no jail `name` names can run here (None: one can, or `name` needs none)."""
    try:
        if isolated(name):
            require(name)
    except JailUnavailable as exc:
        return str(exc)
    return None


def name_of(name: str) -> str:
    """The provider `name` resolves to here (auto: the one it picks), for manifests; a dry
    run on a machine with no jail gets UNAVAILABLE (a real run stops at its preflight first)."""
    try:
        return resolve(name).name if isolated(name) else NONE
    except JailUnavailable:
        return UNAVAILABLE


def image_warning(name: str, pins: Mapping[str, str]) -> str | None:
    """What the image a provider's jails run says against the agents' pins (None: fine, or
    no image of its own)."""
    return resolve(name).image_warning(pins) if isolated(name) else None


def image_programs(name: str) -> bool:
    """Whether the jail `name` runs its image's own programs (an agent CLI by its command
    name) instead of the host's: asked of the provider without a probe when named, of the
    one `auto` picks otherwise (False when none can run here: the preflight says why)."""
    if not isolated(name):
        return False
    try:
        return _unprobed(name).image_programs()
    except JailUnavailable:
        return False


def image_version(name: str, package: str) -> str | None:
    """The version of npm package `package` the jail `name`'s image holds (its label), when
    it runs its image's programs; None otherwise."""
    return _unprobed(name).image_version(package) if image_programs(name) else None


def _unprobed(name: str) -> JailProvider:
    """The provider `name` names, not probed (`auto`: the one it picks, which probes)."""
    return _named(name) if name != AUTO else resolve(name)


def caps_warning(name: str) -> str | None:
    """What the artifact must say of the jails of `name` (its provider's warning: no process
    cap where the harness makes the cgroup and cannot; an image not at the pins), or None."""
    return resolve(name).warning() if isolated(name) else None


UNCONFINED = "or pass --no-jail to run unconfined"  # the way out of every missing jail


def _other_ways(failed: str) -> str:
    others = [c for c in AUTO_ORDER if c != failed]
    return f"try --jail {' or --jail '.join(others)}, {UNCONFINED}"


def install_hint() -> str:
    """What to install for a jail to run here, beyond what each provider's problem says: on
    Linux nothing (each names its package); elsewhere the one provider that serves it."""
    if sys.platform.startswith("linux"):
        return ""
    return (
        ": install Docker Desktop and build the agent image once (docker build -t "
        "skill-eval-agent containers/agent-jail; references/ci.md), or Podman"
    )


__all__ = [
    "AUTO",
    "AUTO_ORDER",
    "NONE",
    "REGISTRY",
    "UNAVAILABLE",
    "JailProvider",
    "Launch",
    "ProviderBase",
    "caps_warning",
    "choice_line",
    "chosen",
    "image_programs",
    "image_version",
    "image_warning",
    "install_hint",
    "isolated",
    "missing",
    "name_of",
    "register_provider",
    "require",
    "resolve",
]
