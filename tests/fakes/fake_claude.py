"""A stand-in `claude` binary for the failure paths the real CLI cannot be made to take.

Not the real CLI, but it speaks the real one's protocol as skill-eval drives it: `claude -p
--output-format stream-json --verbose ...` with the prompt as plain text on stdin, answered
with stream-json lines (a `system` init, an `assistant` message, a `result`). It acts on the
first keyword it finds in the prompt:
    CRASH              print to stderr, exit 1, no JSON
    GARBAGE            print text that is not JSON, exit 0
    HANG marker=M      start a grandchild `sleep` whose command line is M, then sleep itself
                       (the test looks for M in the host's /proc afterwards)
    IS_ERROR           a result with is_error true and a rate-limit message, exit 1
    WRITE_FILE         write notes/result.md ("written by fake claude") in its cwd, then echo
    (anything else)    a result whose text echoes the prompt, exit 0
and a judge's prompt gets a judgement (score 0.9): skill-eval's claude-cli grader (its
`<judgement-NONCE>` block), or the original tool's llm-rubric judge (its JSON object).
`--output-format json` prints the one `result` object (the original tool reads that);
`--version` prints a version line. Installed with `latency`, it waits that many seconds before
answering, as a model would (the benchmarks' stand-in of a 0.3 s model).

It runs inside the attempt's jail, which shows only the system folders, the interpreter and
the folder of the binary: so it is standard library only and installed as a self-contained
copy (`install`), never a script that execs a file of the repository. It cannot write outside
its jail: with $FAKE_CLAUDE_LOG=NAME each call appends a JSON record (argv, cwd, environment,
files under cwd and under $CLAUDE_CONFIG_DIR) to NAME in its working directory, which comes
back to the runner's workspace when the attempt ends.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SESSION = "fake-session"
LATENCY_FILE = "latency"  # beside the installed copy: seconds to wait before answering
JUDGEMENT_TAG = re.compile(r"<(judgement-[0-9a-f]+)>")
ORIGINAL_JUDGE = "You are a judge evaluating AI output quality"
JUDGEMENT = {"reasoning": "fake judge", "score": 0.9}
USAGE = {
    "input_tokens": 10,
    "output_tokens": 3,
    "cache_creation_input_tokens": 2,
    "cache_read_input_tokens": 1,
}


def install(bin_dir: Path, source: str | None = None, *, latency: float = 0.0) -> str:
    """Write a self-contained `claude` into `bin_dir` (this file, or `source`: a script's text)
    run by this interpreter; its path. The jail shows `bin_dir` read-only, so the `latency`
    this file's copy waits before each answer is a file beside it."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    binary = bin_dir / "claude"
    text = Path(__file__).read_text(encoding="utf-8") if source is None else source
    binary.write_text(f"#!{sys.executable}\n{text}", encoding="utf-8")
    binary.chmod(0o755)
    waits = bin_dir / LATENCY_FILE
    if latency:
        waits.write_text(f"{latency}\n", encoding="utf-8")
    else:
        waits.unlink(missing_ok=True)
    return str(binary)


def latency() -> float:
    """The seconds this copy waits before answering (0 without its latency file)."""
    try:
        return float(Path(sys.argv[0]).with_name(LATENCY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0.0


def result_line(text: str, *, is_error: bool = False, subtype: str = "success", **more: Any) -> str:
    return json.dumps(
        {
            "type": "result",
            "subtype": subtype,
            "is_error": is_error,
            "result": text,
            "num_turns": 1,
            "duration_ms": 5,
            "duration_api_ms": 1,
            "total_cost_usd": 0.0012,
            "session_id": SESSION,
            "usage": USAGE,
            **more,
        }
    )


def reply(text: str, *, is_error: bool = False, **more: Any) -> None:
    """Print the stream-json lines of one answer: init, the assistant's text, the result (or
    the result alone, with `--output-format json`)."""
    if _one_object():
        print(result_line(text, is_error=is_error, **more), flush=True)
        return
    init = {"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": SESSION}
    assistant = {
        "type": "assistant",
        "session_id": SESSION,
        "message": {
            "id": "msg-fake",
            "role": "assistant",
            "model": "fake",
            "content": [{"type": "text", "text": text}],
            "usage": USAGE,
        },
    }
    for line in (
        json.dumps(init),
        json.dumps(assistant),
        result_line(text, is_error=is_error, **more),
    ):
        print(line, flush=True)


def _one_object() -> bool:
    """`--output-format json`: the result alone, as one object."""
    argv = sys.argv
    return "--output-format" in argv and argv[argv.index("--output-format") + 1 :][:1] == ["json"]


def _files(root: str | None) -> list[str]:
    """Every file below `root`, relative, sorted."""
    if not root:
        return []
    return sorted(
        os.path.relpath(os.path.join(d, f), root) for d, _, names in os.walk(root) for f in names
    )


def record(argv: list[str], name: str) -> None:
    entry = {
        "argv": argv,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "cwd_files": [f for f in _files(os.getcwd()) if f != name],
        "config_files": _files(os.environ.get("CLAUDE_CONFIG_DIR")),
    }
    with open(name, "a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")


def main(argv: list[str]) -> int:
    if "--version" in argv:
        print("0.0.0-fake (Claude Code)")
        return 0
    if (log := os.environ.get("FAKE_CLAUDE_LOG")) is not None:
        record(argv, log)
    prompt = sys.stdin.read()
    time.sleep(latency())
    if (tag := JUDGEMENT_TAG.search(prompt)) is not None:
        reply(f"<{tag.group(1)}>{json.dumps(JUDGEMENT)}</{tag.group(1)}>")
        return 0
    if prompt.startswith(ORIGINAL_JUDGE):
        reply(json.dumps({"score": JUDGEMENT["score"], "reasoning": JUDGEMENT["reasoning"]}))
        return 0
    if "CRASH" in prompt:
        print("fake claude: simulated crash", file=sys.stderr)
        return 1
    if "GARBAGE" in prompt:
        print("this is not json {", flush=True)
        return 0
    if "HANG" in prompt:
        match = re.search(r"marker=(\S+)", prompt)
        marker = match.group(1) if match else "fake-claude-hang"
        subprocess.Popen([marker, "600"], executable="/bin/sleep")
        print(json.dumps({"type": "system", "subtype": "init", "session_id": SESSION}), flush=True)
        time.sleep(600)
        return 0
    if "IS_ERROR" in prompt:
        reply("API Error: Request rejected (429) · rate limited", is_error=True)
        return 1
    if "WRITE_FILE" in prompt:
        os.makedirs("notes", exist_ok=True)
        with open(os.path.join("notes", "result.md"), "w", encoding="utf-8") as out:
            out.write("written by fake claude\n")
    reply(f"echo: {prompt}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
