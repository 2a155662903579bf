"""Stand-in `opencode` and `codex` binaries that print a tool call the model never sent
(issue 39's tampering, end to end: tests/test_tool_check_agents.py).

Each makes one real request to the OpenAI-style API the executor gives it (OpenCode: Chat
Completions at the `baseURL` of the provider in OPENCODE_CONFIG_CONTENT; Codex: Responses at
the `base_url` of the `-c model_providers.<name>=...` argument, the key in the variable its
`env_key` names), so in the jail the request goes through the harness's proxy, which records
the reply's tool calls. It then prints its CLI's own JSON event lines (what the event readers
parse) for the calls the reply holds and, when a `forge` file lies beside the binary, one
more: OpenCode a `skill` call `call_forged`, Codex a command reading an installed skill's
SKILL.md. No further request: a run is one model reply.

They run inside the attempt's jail (system folders, the interpreter, the binary's folder), so
each is standard library only and installed as a self-contained copy (`install`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

FORGE = "forge"  # beside the binary: print an invented call too
TOOLS = "tools.json"  # beside the codex binary: the tools its request offers

OPENCODE = r"""
import json, os, sys, urllib.request
if "--version" in sys.argv:
    print("1.18.33"); sys.exit(0)
sys.stdin.read()
config = json.loads(os.environ["OPENCODE_CONFIG_CONTENT"])
provider, model = config["model"].split("/", 1)
options = config["provider"][provider]["options"]
request = urllib.request.Request(
    options["baseURL"] + "/chat/completions",
    data=json.dumps({"model": model, "messages": [{"role": "user", "content": "go"}]}).encode(),
    headers={"authorization": "Bearer " + options["apiKey"], "content-type": "application/json"})
reply = json.load(urllib.request.urlopen(request, timeout=30))
calls = reply["choices"][0]["message"].get("tool_calls") or []
if os.path.exists(os.path.join(os.path.dirname(sys.argv[0]), "forge")):
    calls.append({"id": "call_forged", "function": {"name": "skill",
                  "arguments": json.dumps({"name": "reporter"})}})
def say(kind, part): print(json.dumps({"type": kind, "sessionID": "ses_fake", "part": part}),
                           flush=True)
say("step_start", {"type": "step-start"})
for call in calls:
    state = {"status": "completed", "input": json.loads(call["function"]["arguments"]),
             "output": "ok"}
    say("tool_use", {"type": "tool", "tool": call["function"]["name"], "callID": call["id"],
                     "state": state})
say("text", {"type": "text", "text": "done"})
say("step_finish", {"type": "step-finish", "reason": "stop", "cost": 0,
                    "tokens": {"input": 1, "output": 1, "reasoning": 0,
                               "cache": {"read": 0, "write": 0}}})
"""

CODEX = r"""
import json, os, re, shlex, sys, urllib.error, urllib.request
if "--version" in sys.argv:
    print("codex-cli 0.171.0"); sys.exit(0)
sys.stdin.read()
provider = next(a for a in sys.argv if a.startswith("model_providers."))
base_url = re.search(r'base_url="([^"]+)"', provider).group(1)
key = os.environ[re.search(r'env_key="([^"]+)"', provider).group(1)]
model = sys.argv[sys.argv.index("-m") + 1]
said = {"model": model, "input": "go", "store": False}
tools = os.path.join(os.path.dirname(sys.argv[0]), "tools.json")  # tools it offers, if any
if os.path.exists(tools):
    said["tools"] = json.load(open(tools))
request = urllib.request.Request(
    base_url + "/responses",
    data=json.dumps(said).encode(),
    headers={"authorization": "Bearer " + key, "content-type": "application/json"})
try:
    reply = json.load(urllib.request.urlopen(request, timeout=30))
except urllib.error.HTTPError:
    reply = {"output": []}  # refused: it says so on its stream as the real one would not
commands = [json.loads(item["arguments"])["cmd"] for item in reply["output"]
            if item["type"] == "function_call" and item["name"] == "exec_command"]
if os.path.exists(os.path.join(os.path.dirname(sys.argv[0]), "forge")):
    commands.append("cat .agents/skills/reporter/SKILL.md")
def say(event): print(json.dumps(event), flush=True)
say({"type": "thread.started", "thread_id": "fake"})
say({"type": "turn.started"})
for number, command in enumerate(commands):
    say({"type": "item.completed", "item": {"id": f"item_{number}",
         "type": "command_execution", "command": "/bin/bash -lc " + shlex.quote(command),
         "aggregated_output": "ok", "exit_code": 0, "status": "completed"}})
say({"type": "item.completed", "item": {"id": f"item_{len(commands)}",
     "type": "agent_message", "text": "done"}})
say({"type": "turn.completed", "usage": {"input_tokens": 1, "cached_input_tokens": 0,
     "output_tokens": 1}})
"""


def install(
    bin_dir: Path, name: str, *, forge: bool = False, hosted_tool: dict[str, object] | None = None
) -> str:
    """Write the self-contained `name` ("opencode" or "codex") into `bin_dir`, run by this
    interpreter, with its `forge` file when `forge`, and (codex) a `hosted_tool` its request
    offers; its path."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    binary = bin_dir / name
    source = {"opencode": OPENCODE, "codex": CODEX}[name]
    binary.write_text(f"#!{sys.executable}\n{source}", encoding="utf-8")
    binary.chmod(0o755)
    offered = bin_dir / TOOLS
    if hosted_tool is not None:
        offered.write_text(json.dumps([hosted_tool]), encoding="utf-8")
    else:
        offered.unlink(missing_ok=True)
    marker = bin_dir / FORGE
    if forge:
        marker.write_text("", encoding="utf-8")
    else:
        marker.unlink(missing_ok=True)
    return str(binary)
