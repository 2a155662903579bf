"""One Claude Code query through claude-agent-sdk, run as its own process by the `claude-cli`
executor (`python sdk_child.py`, in a new session, with the isolated environment).

Why a process of its own: the SDK always passes its process's whole environment on to the CLI
and starts the CLI without a process group. Here the environment is already the isolated one,
and the executor kills this process's group on a timeout: the CLI and everything it started go
with it. Standard library and the SDK only, so it runs from any interpreter that has the SDK.

stdin: one JSON object {"prompt": str, "options": {ClaudeAgentOptions field: JSON value},
"sys_path": [dir, ...]}. stdout: one JSON line per message,
{"kind": <message class name>, **fields}; an exception ends the stream as
{"kind": "exception", "type": <class name>, "message": str}. Exit code 0 unless stdin is bad.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from typing import Any

# A tool result or file read can be large; the executor trims far below this anyway.
MAX_STRING = 256 * 1024


def _trim(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_STRING:
        return value[:MAX_STRING]
    if isinstance(value, list):
        return [_trim(v) for v in value]
    if isinstance(value, dict):
        return {k: _trim(v) for k, v in value.items()}
    return value


def _fields(value: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return {"repr": repr(value)}


def _plain(message: Any) -> dict[str, Any]:
    data: dict[str, Any] = _fields(message)
    content = getattr(message, "content", None)
    if isinstance(content, list):
        # Content blocks are dataclasses without a type tag: name each one.
        data["content"] = [{"block": type(b).__name__, **_fields(b)} for b in content]
    return dict(_trim({"kind": type(message).__name__, **data}))


def _emit(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record, default=str) + "\n")
    sys.stdout.flush()


async def _run(prompt: str, options: dict[str, Any]) -> None:
    from claude_agent_sdk import ClaudeAgentOptions, query

    def stderr(line: str) -> None:
        sys.stderr.write(line.rstrip("\n") + "\n")

    opts = ClaudeAgentOptions(**options, stderr=stderr)
    async for message in query(prompt=prompt, options=opts):
        _emit(_plain(message))


def main() -> int:
    try:
        request = json.loads(sys.stdin.read())
        prompt, options = request["prompt"], request["options"]
    except (ValueError, KeyError, TypeError) as exc:
        sys.stderr.write(f"sdk_child: bad request on stdin: {exc}\n")
        return 2
    for entry in reversed(request.get("sys_path") or ()):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    try:
        asyncio.run(_run(prompt, options))
    except Exception as exc:  # reported as data: the executor decides what it means
        _emit({"kind": "exception", "type": type(exc).__name__, "message": str(exc)[:4000]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
