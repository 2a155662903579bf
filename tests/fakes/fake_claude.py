"""A stand-in `claude` binary for the failure paths the real CLI cannot be made to take.

Not the real CLI: it reads the prompt from stdin and acts on the first keyword it finds there.
    CRASH              print to stderr, exit 1, no JSON
    GARBAGE            print text that is not JSON, exit 0
    HANG pidfile=P     start a grandchild `sleep`, write "<own pid> <child pid>" to P, sleep
    IS_ERROR           a JSON envelope with is_error true and a rate-limit message, exit 1
    WRITE_FILE         write notes/result.md ("written by fake claude") in its cwd, then echo
    (anything else)    a JSON envelope whose result echoes the prompt, exit 0
`--version` prints a version line. With `--input-format stream-json` (how claude-agent-sdk
drives the CLI) it answers the SDK's `initialize` control request, takes the prompt from the
first user message and prints the reply as stream-json messages (init, assistant, result).
When $FAKE_CLAUDE_ARGV_LOG is set, each call appends a JSON line there: argv, cwd,
environment, files under cwd and under $CLAUDE_CONFIG_DIR.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time


def envelope(result: str, *, is_error: bool = False) -> str:
    return json.dumps(
        {
            "type": "result",
            "subtype": "success",
            "is_error": is_error,
            "result": result,
            "num_turns": 1,
            "duration_ms": 5,
            "duration_api_ms": 1,
            "total_cost_usd": 0.0012,
            "session_id": "fake-session",
            "usage": {
                "input_tokens": 10,
                "output_tokens": 3,
                "cache_creation_input_tokens": 2,
                "cache_read_input_tokens": 1,
            },
        }
    )


def _files(root: str | None) -> list[str]:
    """Every file below `root`, relative, sorted."""
    if not root:
        return []
    return sorted(
        os.path.relpath(os.path.join(d, f), root) for d, _, names in os.walk(root) for f in names
    )


def read_stream_prompt() -> str:
    """The SDK's side of the stream-json protocol, up to the first user message."""
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("type") == "control_request":
            reply = {
                "type": "control_response",
                "response": {
                    "subtype": "success",
                    "request_id": message.get("request_id"),
                    "response": {},
                },
            }
            print(json.dumps(reply), flush=True)
        elif message.get("type") == "user":
            content = message.get("message", {}).get("content")
            if isinstance(content, list):
                return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
            return str(content)
    return ""


def stream_reply(text: str) -> str:
    """The reply as stream-json lines: what the SDK reads instead of one envelope."""
    result = json.loads(text)
    init = {
        "type": "system",
        "subtype": "init",
        "cwd": os.getcwd(),
        "session_id": "fake-session",
        "tools": [],
        "model": "fake",
    }
    assistant = {
        "type": "assistant",
        "session_id": "fake-session",
        "message": {
            "role": "assistant",
            "model": "fake",
            "content": [{"type": "text", "text": result["result"]}],
        },
    }
    return "\n".join(json.dumps(m) for m in (init, assistant, result))


def main(argv: list[str]) -> int:
    log = os.environ.get("FAKE_CLAUDE_ARGV_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as out:
            out.write(
                json.dumps(
                    {
                        "argv": argv,
                        "cwd": os.getcwd(),
                        "env": dict(os.environ),
                        "cwd_files": _files(os.getcwd()),
                        "config_files": _files(os.environ.get("CLAUDE_CONFIG_DIR")),
                    }
                )
                + "\n"
            )
    if "--version" in argv:
        print("0.0.0-fake (Claude Code)")
        return 0
    streaming = (
        "stream-json" in argv[argv.index("--input-format") + 1 :][:1]
        if "--input-format" in argv
        else False
    )
    prompt = read_stream_prompt() if streaming else sys.stdin.read()
    reply = stream_reply if streaming else (lambda text: text)
    if "CRASH" in prompt:
        print("fake claude: simulated crash", file=sys.stderr)
        return 1
    if "GARBAGE" in prompt:
        print("this is not json {")
        return 0
    if "HANG" in prompt:
        match = re.search(r"pidfile=(\S+)", prompt)
        child = subprocess.Popen(["sleep", "600"])
        if match:
            with open(match.group(1), "w", encoding="utf-8") as out:
                out.write(f"{os.getpid()} {child.pid}\n")
        time.sleep(600)
        return 0
    if "IS_ERROR" in prompt:
        print(reply(envelope("API Error: Request rejected (429) · rate limited", is_error=True)))
        return 1
    if "WRITE_FILE" in prompt:
        os.makedirs("notes", exist_ok=True)
        with open(os.path.join("notes", "result.md"), "w", encoding="utf-8") as out:
            out.write("written by fake claude\n")
    print(reply(envelope(f"echo: {prompt}")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
