"""`turns`: an executor from outside skill-eval for a made-up agent CLI (cli.py here) with a
wire format of its own, written as a plugin would be (imported as `turn_agent` from a dist
whose entry point in `skill_eval.executors` names `turn_agent:SPEC`). It declares, on its own:

- its dialect, which the jail's forward speaks for it: `POST /turns/v0/next` (the agent's base
  URL inside the jail is the forward's own root), its key in `x-turn-key`, the request fields
  and `x-turn-features` values its CLI sends and nothing else, and how a reply's calls and
  usage read (`do`, `spent`);
- its event reader: its events, its tool names under Claude Code's (`put` is `Write`) and so
  its tampering rule (by the model's own call ids);
- its package, named when its binary is missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skill_eval.core.model import ExecutionRequest, ExecutionResult, Usage
from skill_eval.executors.agent_launch import Start
from skill_eval.executors.agents.config import COMMON, AgentCliConfig
from skill_eval.executors.agents.delivery import Delivered
from skill_eval.executors.agents.events import EventReader, api_failure
from skill_eval.executors.agents.executor import AgentCliExecutor
from skill_eval.executors.base import ExecutorSpec, config_schema
from skill_eval.jail.api_log import ApiLog
from skill_eval.jail.request_rules import header_values, outside
from skill_eval.jail.session import JailedCommand
from skill_eval.jail.wire import ApiDialect, ApiRequest, Call, Refusal, ReplyUsage

TOOLS = {"put": "Write"}  # its tools -> the transcript's (Claude Code's) names


class TurnDialect(ApiDialect):
    name = "turns"
    routes = frozenset({"/turns/v0/next"})
    headers = frozenset({"content-type", "x-turn-key", "x-turn-features"})
    credential_headers = frozenset({"x-turn-key"})
    placeholder_prefix = "turn-jail-"

    def credentials(self, key: str | None) -> dict[str, str]:
        return {"x-turn-key": key} if key else {}

    def check(self, request: ApiRequest) -> Refusal | None:
        features = frozenset({"plain"})
        return header_values(request.headers, "x-turn-features", features) or outside(
            request.body, frozenset({"prompt", "done"}), "the body"
        )

    def replies(self) -> TurnReplies:
        return TurnReplies()


class TurnReplies:
    """A reply is one JSON object: `do` (the calls), `say`, `model`, `spent` {in, out}."""

    def __init__(self) -> None:
        self._usage: ReplyUsage | None = None

    def event(self, event: Mapping[str, Any]) -> list[Call]:
        return []  # it never streams

    def done(self) -> list[Call]:
        return []

    def whole(self, body: Any) -> list[Call]:
        if not isinstance(body, Mapping):
            return []
        spent = body.get("spent") if isinstance(body.get("spent"), Mapping) else {}
        self._usage = ReplyUsage(body.get("model"), int(spent["in"]), int(spent["out"]))
        return [(str(c["id"]), str(c["tool"]), c["args"]) for c in body.get("do") or []]

    def usage(self) -> ReplyUsage | None:
        return self._usage


@dataclass
class TurnReader(EventReader):
    failed: Mapping[str, Any] | None = None

    def tool_name(self, sent: str) -> str:
        return TOOLS.get(sent, sent)

    def event(self, event: Mapping[str, Any]) -> bool:
        kind = event.get("kind")
        if kind == "did":
            call_id, tool = str(event["id"]), str(event["tool"])
            going = self.call(call_id, self.tool_name(tool), dict(event["args"]))
            self.answer(call_id, True, "written")
            return going
        if kind == "said":
            self.last_text = str(event.get("text") or "")
        elif kind == "spent":
            self.usage += Usage(input_tokens=int(event["in"]), output_tokens=int(event["out"]))
            self.replies += 1
        elif kind == "failed":
            self.failed = event
        return True

    def result(self, exit_code: int | None, stderr: str, api: ApiLog | None) -> ExecutionResult:
        more: dict[str, Any] = {"transcript": self.transcript(), "usage": self.usage}
        if self.failed is not None:
            status = self.failed.get("status")
            said = str(self.failed.get("message") or "")
            return api_failure("turns", status if isinstance(status, int) else None, said, **more)
        if exit_code != 0:
            return ExecutionResult(error=f"turn-agent ended with {exit_code}", **more)
        return ExecutionResult(output=self.last_text, meta=self.meta(), **more)


@dataclass(frozen=True)
class TurnConfig(AgentCliConfig):
    turn_bin: str | None = None
    api_key_env: str = "TURN_API_KEY"


class TurnExecutor(AgentCliExecutor):
    name = "turns"
    cli = "turn-agent"
    package = "turn-agent (tests/fakes/turn_agent)"
    dialect = TurnDialect()
    skills_dir = ".turns/skills"

    def __init__(self, config: TurnConfig) -> None:
        super().__init__(config, config.turn_bin)
        self.config: TurnConfig = config

    def start(self, jail: JailedCommand, request: ExecutionRequest, delivery: Delivered) -> Start:
        base_url, key = self.api()
        env = self.base_env(jail.home)
        env.update(TURN_URL=base_url, TURN_KEY=key)
        return Start([str(self.program)], env)

    def reader(self, stop_at_skill: str | None) -> TurnReader:
        return TurnReader(stop_at_skill=stop_at_skill)

    def tools_record(self, request: ExecutionRequest) -> dict[str, Any]:
        return {"tools": list(TOOLS)}

    def describe(self) -> dict[str, Any]:
        return {"kind": "turns", "model": self.model, "version": self.version()}


SPEC = ExecutorSpec(
    name="turns",
    config_cls=TurnConfig,
    schema=config_schema(TurnConfig, {**COMMON, "turn_bin": {"type": ["string", "null"]}}),
    build=TurnExecutor,
    skill_roots=(TurnExecutor.skills_dir,),
    summary="a test agent CLI with a wire format of its own (tests/fakes/turn_agent)",
)
