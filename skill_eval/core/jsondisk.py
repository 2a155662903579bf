"""A diskcache store that reads JSON only, never pickle.

diskcache's default Disk unpickles keys and values read back from its SQLite file, so anyone
who can write the cache directory can run code in the harness (CVE-2025-69872). SafeJSONDisk
stores JSON text, refuses any row in pickle mode or with a non-raw key, and never touches a
file outside its directory. Both the baseline cache and the judge cache are built on it.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import diskcache
from diskcache.core import MODE_BINARY, MODE_RAW, MODE_TEXT, UNKNOWN

from ..errors import CacheError

REFUSED_KEY = "<refused: key stored in pickle form>"


class UnsafeCacheEntry(CacheError, ValueError):
    """A cache row that would need unpickling, or that points outside the cache."""


class SafeJSONDisk(diskcache.Disk):  # type: ignore[misc]  # diskcache has no types
    def put(self, key: Any) -> tuple[Any, bool]:
        if not isinstance(key, str):
            raise TypeError("cache keys are strings")
        return key, True

    def get(self, key: Any, raw: bool) -> Any:
        # Called when listing keys. A key stored in pickle form is named, never unpickled.
        if not raw or not isinstance(key, str):
            return REFUSED_KEY
        return key

    def store(self, value: Any, read: bool, key: Any = UNKNOWN) -> Any:
        if read:
            raise TypeError("file values are not supported")
        return super().store(json.dumps(value, sort_keys=True), False, key=key)

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
        if mode not in (MODE_RAW, MODE_TEXT, MODE_BINARY) or read:
            raise UnsafeCacheEntry(f"refusing a cache value stored in mode {mode} (pickle)")
        if filename is not None:
            self._inside(filename)
        data = super().fetch(mode, filename, value, False)
        if isinstance(data, (bytes, sqlite3.Binary)):
            data = bytes(data).decode("utf-8")
        if not isinstance(data, str):
            raise UnsafeCacheEntry("cache value is not JSON text")
        return json.loads(data)

    def remove(self, file_path: str) -> None:
        self._inside(file_path)
        super().remove(file_path)

    def _inside(self, filename: str) -> None:
        root = os.path.realpath(self._directory)
        target = os.path.realpath(os.path.join(root, filename))
        if os.path.commonpath([root, target]) != root:
            raise UnsafeCacheEntry(f"cache entry points outside the cache: {filename!r}")


def open_json_cache(directory: Path) -> diskcache.Cache:
    """Open (creating it; its mode follows the umask) a diskcache directory that stores JSON
    values."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return diskcache.Cache(str(directory), disk=SafeJSONDisk)
    except (OSError, sqlite3.Error) as exc:
        raise CacheError(
            f"cannot open cache directory {directory}: {exc}", path=str(directory)
        ) from None
