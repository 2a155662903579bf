"""The model-call layer of model-graded judges: one structured request, one reply.

`request_structured` asks a model for a JSON object and returns an `LLMReply`; it never raises.
Backends follow `ctx.judge_backend`: "anthropic" (official SDK, forced tool call), "claude-cli"
(`claude -p --output-format json`, isolated config dir, JSON pulled out of the reply text) and
"mock" (callers handle mock themselves; reaching here with it is an error).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..executors.base import DEFAULT_MODEL
from ..executors.errors_map import retryable_status
from ..model import Usage
from .base import JudgeContext

DEFAULT_JUDGE_MODEL = DEFAULT_MODEL
SDK_MAX_RETRIES = 4
DEFAULT_TIMEOUT = 120.0


@dataclass(frozen=True)
class LLMReply:
    """A model's structured reply. `data` is the JSON object it gave (not validated against the
    schema: callers check the fields they need); `error` is set when there is no usable reply,
    and `transient` then says whether asking again may help (timeouts, 429, 5xx, dropped
    connections, a reply with no JSON) or not (no key, no CLI, 401/403/404, a bad backend)."""

    data: dict[str, Any] | None
    raw_text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    error: str | None = None
    transient: bool = True


def judge_model(ctx: JudgeContext, config: Mapping[str, Any] | None = None) -> str:
    """The model a judge uses: --judge-model, then the judge config's `judge_model`, then
    SKILL_EVAL_JUDGE_MODEL, then DEFAULT_JUDGE_MODEL."""
    env = ctx.env if ctx.env is not None else os.environ
    return (ctx.judge_model or (config or {}).get("judge_model")
            or env.get("SKILL_EVAL_JUDGE_MODEL") or os.environ.get("SKILL_EVAL_JUDGE_MODEL")
            or DEFAULT_JUDGE_MODEL)


def request_structured(ctx: JudgeContext, *, system: str, prompt: str, schema: dict,
                       tool_name: str, model: str | None, max_tokens: int = 1024,
                       temperature: float = 0.0) -> LLMReply:
    """Ask the judge backend for one JSON object shaped by `schema`; never raises."""
    model = model or judge_model(ctx)
    backend = ctx.judge_backend
    try:
        if backend == "anthropic":
            return _anthropic(ctx, system, prompt, schema, tool_name, model, max_tokens,
                              temperature)
        if backend == "claude-cli":
            return _claude_cli(ctx, system, prompt, schema, tool_name, model)
    except Exception as exc:  # a judge must never raise into the runner
        return LLMReply(None, "", model=model, error=f"{backend} judge call failed: "
                                                     f"{type(exc).__name__}: {exc}",
                        transient=False)  # a bug here raises again
    if backend == "mock":
        return LLMReply(None, "", model=model,
                        error="mock judge backend reached request_structured; "
                              "mock judgements are made by the judge itself", transient=False)
    return LLMReply(None, "", model=model, error=f"unknown judge backend {backend!r}; "
                                                 "valid: anthropic, claude-cli, mock",
                    transient=False)


# --- JSON extraction (claude-cli replies, and anthropic replies without a tool call) ---------

def extract_json_object(text: str, required: Sequence[str] = ()) -> dict[str, Any] | None:
    """The JSON object a model's reply text gives: the whole text when it is one; otherwise the
    last object in it, fenced or in prose, that has every `required` key (else the last object
    at all). Last, because a judge that quotes the judged output (`the output says {"score":
    1.0}`) gives its own verdict after the quote. None when the text holds no object."""
    try:
        value = json.loads(text.strip())
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        return value
    objects = _objects_in(text)
    complete = [o for o in objects if all(key in o for key in required)]
    candidates = complete or objects
    return candidates[-1] if candidates else None


def _objects_in(text: str) -> list[dict[str, Any]]:
    """Every outermost JSON object in `text`, in order (an object inside another is part of
    it, not a candidate of its own)."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    at = text.find("{")
    while at != -1:
        try:
            value, end = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            at = text.find("{", at + 1)
            continue
        found.append(value)
        at = text.find("{", end)
    return found


# --- anthropic -----------------------------------------------------------------------------

_clients: dict[tuple[str | None, str, float], Any] = {}
_clients_lock = threading.Lock()


def _env_get(ctx: JudgeContext, name: str) -> str | None:
    if ctx.env is not None and ctx.env.get(name):
        return ctx.env[name]
    return os.environ.get(name) or None


def _client(ctx: JudgeContext) -> Any:
    import anthropic  # imported lazily: the SDK is slow to import and only this path needs it

    api_key = _env_get(ctx, "ANTHROPIC_API_KEY")
    if not api_key:
        raise _NoKey("ANTHROPIC_API_KEY is not set (needed by --judge-executor anthropic)")
    base_url = ctx.backend_options.get("base_url") or _env_get(ctx, "ANTHROPIC_BASE_URL")
    timeout = float(ctx.backend_options.get("timeout") or DEFAULT_TIMEOUT)
    key = (base_url, api_key, timeout)
    with _clients_lock:
        if key not in _clients:
            _clients[key] = anthropic.Anthropic(
                api_key=api_key, base_url=base_url, timeout=timeout,
                max_retries=int(ctx.backend_options.get("max_retries", SDK_MAX_RETRIES)))
        return _clients[key]


class _NoKey(Exception):
    pass


def _anthropic(ctx: JudgeContext, system: str, prompt: str, schema: dict, tool_name: str,
               model: str, max_tokens: int, temperature: float) -> LLMReply:
    import anthropic

    params: dict[str, Any] = {
        "model": model, "max_tokens": max_tokens, "system": system,
        "messages": [{"role": "user", "content": prompt}],
        "tools": [{"name": tool_name, "input_schema": schema,
                   "description": "Record the judgement. Call this exactly once."}],
        "tool_choice": {"type": "tool", "name": tool_name},
        # Not a keyword of every SDK version (2.x dropped it), so sent in the body itself.
        "extra_body": {"temperature": temperature},
    }
    try:
        client = _client(ctx)
        try:
            response = client.messages.create(**params)
        except anthropic.BadRequestError as exc:
            if "temperature" not in str(exc):
                raise
            # A model that takes no sampling parameters: ask again without it.
            response = client.messages.create(**{**params, "extra_body": {}})
    except _NoKey as exc:
        return LLMReply(None, "", model=model, error=str(exc), transient=False)
    except anthropic.APIStatusError as exc:
        return LLMReply(None, "", model=model,
                        error=f"judge model API error {exc.status_code}: {_short(exc)}",
                        transient=retryable_status(exc.status_code))
    except anthropic.APIConnectionError as exc:
        return LLMReply(None, "", model=model, error=f"judge model unreachable: {_short(exc)}")
    except anthropic.AnthropicError as exc:
        return LLMReply(None, "", model=model, error=f"judge model call failed: {_short(exc)}")
    usage = _usage(getattr(response, "usage", None))
    texts: list[str] = []
    for block in response.content or []:
        if getattr(block, "type", None) == "tool_use" and block.name == tool_name:
            data = block.input if isinstance(block.input, dict) else None
            raw = json.dumps(block.input, sort_keys=True, default=str)
            if data is None:
                return LLMReply(None, raw, usage, response.model or model,
                                "judge tool call input is not a JSON object")
            return LLMReply(data, raw, usage, response.model or model)
        if getattr(block, "type", None) == "text":
            texts.append(block.text)
    raw = "\n".join(texts)
    data = extract_json_object(raw, _required(schema))
    error = None if data is not None else "judge reply has no tool call and no JSON object"
    return LLMReply(data, raw, usage, response.model or model, error)


def _required(schema: Mapping[str, Any]) -> list[str]:
    required = schema.get("required")
    return [str(k) for k in required] if isinstance(required, list) else []


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    return Usage(**{k: int(getattr(raw, k, 0) or 0) for k in Usage().to_dict()})


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


# --- claude CLI ----------------------------------------------------------------------------

# The user's settings, CLAUDE.md files, skills and hooks must not reach the judge.
CLI_ISOLATION_ENV = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
}
_AUTH_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")


def cli_command(binary: str, system: str, model: str) -> list[str]:
    """argv of one judgement: a single reply, our system prompt instead of Claude Code's, no
    tools, no MCP servers, no settings, skills or session files; the prompt goes on stdin."""
    return [binary, "-p", "--output-format", "json", "--model", model,
            "--system-prompt", system, "--tools=", "--setting-sources=",
            "--strict-mcp-config", '--mcp-config={"mcpServers":{}}',
            "--disable-slash-commands", "--no-session-persistence"]


def find_claude(claude_bin: str | None) -> str | None:
    """The CLI's path: `claude_bin` (a path, or a name on PATH), else `claude` on PATH."""
    name = str(claude_bin or "claude")
    if os.sep in name:
        path = os.path.expanduser(name)
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    return shutil.which(name)


def _copy_credentials(env: Mapping[str, str], config_dir: str) -> None:
    """A subscription login lives in <config dir>/.credentials.json: copy only that file into
    the throw-away config dir, and only when no key or token is exported."""
    if any(env.get(v) for v in _AUTH_VARS):
        return
    home = env.get("HOME") or os.path.expanduser("~")
    source = os.path.join(env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude"),
                          ".credentials.json")
    if os.path.isfile(source):
        target = os.path.join(config_dir, ".credentials.json")
        shutil.copyfile(source, target)
        os.chmod(target, 0o600)


def _claude_cli(ctx: JudgeContext, system: str, prompt: str, schema: dict, tool_name: str,
                model: str) -> LLMReply:
    binary = find_claude(ctx.backend_options.get("claude_bin"))
    if not binary:
        return LLMReply(None, "", model=model,
                        error="claude CLI not found in PATH (needed by --judge-executor "
                              "claude-cli). Install it or use --mock for testing.",
                        transient=False)
    text = (f"{prompt}\n\nNo tools are available here: instead of calling "
            f"{tool_name}, reply with only the JSON object you would pass to it, no prose, "
            f"matching this JSON Schema:\n{json.dumps(schema, sort_keys=True)}")
    timeout = float(ctx.backend_options.get("timeout") or DEFAULT_TIMEOUT)
    base = dict(os.environ if ctx.env is None else {**os.environ, **ctx.env})
    with tempfile.TemporaryDirectory(prefix="skill-eval-judge-cli-") as tmp:
        env = {**base, **CLI_ISOLATION_ENV, "CLAUDE_CONFIG_DIR": os.path.join(tmp, "config")}
        os.makedirs(env["CLAUDE_CONFIG_DIR"], mode=0o700)
        _copy_credentials(base, env["CLAUDE_CONFIG_DIR"])
        proc = subprocess.Popen(
            cli_command(str(binary), system, model),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, cwd=tmp, env=env, start_new_session=True)
        try:
            stdout, stderr = proc.communicate(text, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            proc.communicate()
            return LLMReply(None, "", model=model,
                            error=f"claude CLI judge timed out after {timeout:g}s")
        finally:
            _kill_group(proc.pid)
    return parse_cli_envelope(stdout, proc.returncode, stderr, model, _required(schema))


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def parse_cli_envelope(stdout: str, returncode: int, stderr: str, model: str,
                       required: Sequence[str] = ()) -> LLMReply:
    """Turn `claude -p --output-format json` output into an LLMReply; `required` are the keys
    the reply's JSON object must have (see extract_json_object)."""
    try:
        envelope = json.loads(stdout)
    except ValueError:
        detail = (stderr.strip() or stdout.strip())[-300:]
        return LLMReply(None, stdout, model=model,
                        error=f"claude CLI judge gave no JSON envelope (exit {returncode}): "
                              f"{detail}")
    if not isinstance(envelope, dict):
        return LLMReply(None, stdout, model=model, error="claude CLI envelope is not an object")
    result = envelope.get("result")
    usage = Usage.from_dict(envelope.get("usage") if isinstance(envelope.get("usage"), dict)
                            else None)
    if envelope.get("is_error") or returncode != 0 or not isinstance(result, str):
        status = envelope.get("api_error_status")  # 401, 404...: asking again cannot help
        return LLMReply(None, str(result or ""), usage, model,
                        f"claude CLI judge failed (exit {returncode}): "
                        f"{str(result or envelope.get('subtype') or stderr)[:300]}",
                        transient=not isinstance(status, int) or retryable_status(status))
    data = extract_json_object(result, required)
    error = None if data is not None else "claude CLI judge reply holds no JSON object"
    return LLMReply(data, result, usage, model, error)
