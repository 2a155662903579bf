"""One small registry for judges and executors: built-in specs as data, plugins from an
entry-point group, and the same rules for both.

- Built-ins are a map `name -> "module:ATTRIBUTE"` (relative to the package); a built-in's
  module is imported the first time its name is asked for, so validating a suite that uses
  `contains` never imports the model-graded judges.
- Plugins (entry points of `group`) load once, on the first name no built-in has. A plugin
  may not replace a built-in (the built-in wins, and the plugin is reported); `register()`
  from code may, since a library user asked for it explicitly.
- A plugin that fails to load is remembered with its exception, and named in the error for
  an unknown name: "plugin 'shout' failed to load: ImportError: ...".
- `reset()` forgets everything loaded or registered, for tests.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from .validation import did_you_mean

S = TypeVar("S")


class Registry(Generic[S]):
    def __init__(
        self,
        *,
        kind: str,
        valid: str,
        group: str,
        package: str,
        builtins: Mapping[str, str],
        coerce: Callable[[Any], S],
        name_of: Callable[[S], str],
    ) -> None:
        self.kind = kind  # "judge type", "executor": used in messages
        self.valid = valid  # "valid types", "valid executors"
        self.group = group
        self._package = package
        self._builtins = dict(builtins)
        self._coerce = coerce  # what an entry point loads -> a spec (raises when it is not)
        self._name_of = name_of
        self._lock = threading.RLock()
        self.reset()

    def reset(self) -> None:
        """Back to the state of a new process: nothing loaded, nothing registered."""
        with self._lock:
            self._specs: dict[str, S] = {}
            self._failed: dict[str, str] = {}  # plugin name -> why it did not load
            self._plugins_loaded = False

    def register(self, spec: S) -> S:
        with self._lock:
            self._specs[self._name_of(spec)] = spec
        return spec

    def _builtin(self, name: str) -> S | None:
        target = self._builtins.get(name)
        if target is None:
            return None
        module_name, _, attr = target.partition(":")
        module = importlib.import_module(f"{self._package}.{module_name}")
        spec: S = getattr(module, attr)
        return spec

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        from importlib.metadata import entry_points

        self._plugins_loaded = True
        for ep in entry_points(group=self.group):
            if ep.name in self._builtins:
                self._failed[ep.name] = (
                    f"a built-in {self.kind} has that name; plugins cannot replace built-ins"
                )
                continue
            try:
                spec = self._coerce(ep.load())
            except Exception as exc:  # a broken plugin must not break the harness
                self._failed[ep.name] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
                continue
            self._specs.setdefault(self._name_of(spec), spec)

    def get(self, name: str) -> S | None:
        """The spec registered under `name`, or None (see `unknown`)."""
        with self._lock:
            if name in self._specs:
                return self._specs[name]
            spec = self._builtin(name)
            if spec is not None:
                self._specs[name] = spec
                return spec
            self._load_plugins()
            return self._specs.get(name)

    def names(self) -> list[str]:
        """Every name: built-ins, plugins that loaded, and specs registered from code."""
        with self._lock:
            self._load_plugins()
            return sorted(set(self._builtins) | set(self._specs))

    def failures(self) -> dict[str, str]:
        with self._lock:
            self._load_plugins()
            return dict(self._failed)

    def unknown(self, name: str) -> str:
        """The message for a name nothing provides: the closest valid name when it looks like
        a typo, the valid names, and why a plugin of that name (or any plugin) did not load."""
        names = self.names()
        message = (
            f"unknown {self.kind} {name!r}{did_you_mean(name, names)}; "
            f"{self.valid}: {', '.join(names)}"
        )
        failed = self.failures()
        if name in failed:
            return f"{message}; plugin {name!r} failed to load: {failed[name]}"
        if failed:
            shown = "; ".join(f"plugin {n!r} failed to load: {why}" for n, why in failed.items())
            message += f" ({shown})"
        return message
