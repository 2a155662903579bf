"""The inside of a jailed `python` judgement (judges/python_jail.py starts it): imports the
callable a suite names and either reports whether it loads (`check`) or calls it on one
output (`call`), and sends what happened to the harness as one JSON line over the socket whose
fd `SKILL_EVAL_PYTHON_CHANNEL` names, prefixed with the nonce the harness sent first.

This file imports nothing but the standard library at its top: the harness copies it into
each judgement's folder and runs it there as a script (`python -I runner.py REQUEST`). The
Task and Work it calls the function with come pickled from the harness (the direction that is
safe: the jail unpickles the harness's data; the harness reads only this file's JSON). The
suite's code runs in this process, in the jail: no secret in its environment, no network.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pickle
import socket
import sys
import traceback
from typing import Any

CHANNEL_ENV = "SKILL_EVAL_PYTHON_CHANNEL"
TRACEBACK_LINES = 12


def _open_channel() -> tuple[socket.socket | None, bytes]:
    spec = os.environ.pop(CHANNEL_ENV, "")
    if not spec.isdigit():
        return None, b""
    fd = int(spec)
    try:
        os.set_inheritable(fd, False)  # no program the suite's code starts gets the channel
        sock = socket.socket(fileno=fd)
        sock.settimeout(10)
        nonce = b""
        while not nonce.endswith(b"\n") and len(nonce) < 200:
            chunk = sock.recv(200 - len(nonce))
            if not chunk:
                break
            nonce += chunk
        sock.settimeout(None)
    except OSError:
        return None, b""
    return sock, nonce.strip()


def load_problem(spec: str) -> str | None:
    """Why `spec` (`package.module:attr.path`) cannot be loaded, in one line; None when it
    loads and is callable. Importing runs the module's top-level code (here, in the jail)."""
    module_name, _, attr_path = spec.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if (
            exc.name is not None
            and module_name.startswith(exc.name)
            and module_name[len(exc.name) :][:1] in ("", ".")
        ):
            return (
                f"module {module_name!r} not found (install it, or put its folder on PYTHONPATH)"
                + _closed_folder()
            )
        return f"importing module {module_name!r} failed: ModuleNotFoundError: {exc}"
    except (Exception, SystemExit) as exc:  # its top-level code may raise anything
        return f"importing module {module_name!r} failed: {type(exc).__name__}: {exc}"
    walked = module_name
    for attr in attr_path.split("."):
        if not hasattr(obj, attr):
            return f"{walked!r} has no attribute {attr!r}"
        obj = getattr(obj, attr)
        walked += (":" if walked == module_name else ".") + attr
    if not callable(obj):
        return f"{spec!r} is a {type(obj).__name__}, not a callable"
    return None


def _closed_folder() -> str:
    """Why the module may be there yet not found: a folder on the path this process may not
    read (a container's jail runs as another user than the folder's owner)."""
    for folder in sys.path:
        if folder and os.path.isdir(folder) and not os.access(folder, os.R_OK | os.X_OK):
            return (
                f"; {folder} cannot be read in the jail, which runs as another user:"
                f" `chmod o+rx {folder}`, or --jail bubblewrap"
            )
    return ""


def _function(spec: str) -> Any:
    module_name, _, attr_path = spec.partition(":")
    obj: Any = importlib.import_module(module_name)
    for attr in attr_path.split("."):
        obj = getattr(obj, attr)
    if not callable(obj):
        raise TypeError(f"{spec} is a {type(obj).__name__}, not a callable")
    return obj


def _wants_work(fn: Any) -> bool:
    """Whether `fn` takes a `work` argument: functions written for `(output, task)` keep
    being called that way."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # some builtins have no signature
        return False
    param = params.get("work")
    return param is not None and param.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )


def _tail(exc: BaseException) -> str:
    text = "".join(traceback.format_exception(exc)).rstrip().splitlines()
    return "\n".join(text[-TRACEBACK_LINES:])


def _plain(value: Any) -> Any:
    """What the function returned, as JSON the harness turns into a JudgeResult (to_result)."""
    if type(value).__name__ == "JudgeResult" and hasattr(value, "passed"):
        return {
            "kind": "judge_result",
            "passed": value.passed,
            "score": value.score,
            "details": value.details,
            "error": value.error,
            "data": dict(value.data or {}),
        }
    if isinstance(value, bool | int | float) or (
        isinstance(value, dict) and ("passed" in value or "score" in value)
    ):
        return {"kind": "value", "value": value}
    return {"kind": "other", "type": type(value).__name__}


def call(spec: str, request: str) -> dict[str, Any]:
    """Call the function named by `spec` on the pickled (output, task, work) in `request`."""
    try:
        fn = _function(spec)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # its top-level code may sys.exit()
        return {"kind": "load_error", "message": f"{type(exc).__name__}: {exc}"}
    with open(request, "rb") as handle:
        task, work = pickle.load(handle)
    try:
        value = fn(work.text, task, work=work) if _wants_work(fn) else fn(work.text, task)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return {
            "kind": "raised",
            "type": type(exc).__name__,
            "message": str(exc),
            "traceback": _tail(exc),
        }
    plain: dict[str, Any] = _plain(value)
    return plain


def main() -> int:
    sock, nonce = _open_channel()
    if sock is None:
        print("skill-eval python runner: no channel to the harness", file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as handle:
        order = json.load(handle)
    sys.path[:0] = [p for p in order.get("path", []) if isinstance(p, str)]
    if order["mode"] == "check":
        found: Any = {spec: load_problem(spec) for spec in order["specs"]}
    else:
        found = call(order["spec"], order["request"])
    line = json.dumps({"event": "done", "found": found}, default=repr)
    sock.sendall(nonce + b" " + line.encode("utf-8") + b"\n")
    sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
