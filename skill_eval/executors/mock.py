"""`mock`: a deterministic executor with no network, the one CI and the tests use.

By default every prompt gets MOCK_OUTPUT. `--mock-outputs FILE` scripts it: `{task_id: text}`
gives both arms the same text, `{candidate: {...}, baseline: {...}}` gives each arm its own
(any arm label may be a key: an --arm run's arms, or `evaluate` over more arms); a task missing
from the file, or an arm missing from a per-arm file, falls back to MOCK_OUTPUT, which a run
says before it starts (`check_run`, mock_coverage.py; an error with --strict). An output may
also be an object `{text, files, tools}` for agent tasks (mock_work): files written into the
workspace, tool calls recorded as the transcript; `{triggered: true|false}` for trigger tasks
(unscripted: not triggered).

The mock honours each request's skill mode (an arm's delivery, --arm) as Claude Code would,
without writing anything: in installed mode it records in each result's
`meta["would_install"]` the files installed mode would copy (paths under .claude/skills/), in
context mode in `meta["would_write"]` the context file and the skill's files it would index
(skills/context.py), so such a suite dry-runs honestly. `{triggered: true}` on an agent task
of an installed arm scripts the agent invoking the skill (a `Skill` call naming it, counted
in `meta["skill_invocations"]`).

`mock_rules` (a test double for `skill-eval improve --mock`, not a feature): a task with no
scripted output is answered by `mock_model.rule_following_output`, which names the
task's `contains` terms only when the skill holds the rule `[rule:<task id or category>]`, so
an improve loop visibly converges offline.

The mock grader answers every judgement with a well-formed object built from the request's
schema: every number MOCK_SCORE (so `llm-rubric` and each rubric dimension score 0.8), every
string empty, every list empty. Judges build their real prompt and parse this reply; the
grader records each request (in memory, and as JSON lines when given a file) so tests can
read the prompt a judge built.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core.failure import Failure
from ..core.model import ARM_NAMES, ExecutionRequest, ExecutionResult, Task, Usage
from ..core.work import ToolCall
from ..skills.context import plan_context
from ..skills.install import plan_install
from .base import ExecutorBase, ExecutorConfig, ExecutorSpec, config_schema
from .catalog import skill_invocations
from .grader import GradeRequest, GraderSettings, Reply, extract_judgement
from .mock_coverage import check_scripted, scripted_notes
from .mock_outputs import (
    keyed_by_arm,
    load_mock_outputs,
)
from .mock_work import scripted, write_files

MOCK_OUTPUT = "Mock execution output: no model was called."
MOCK_SCORE = 0.8  # documented: "--mock: LLM-rubric judges return a fixed 0.8"
MOCK_MODEL = "mock"
DESCRIBED_OUTPUTS_CHARS = 64 * 1024  # scripted outputs beyond this are named by hash


@dataclass(frozen=True)
class MockConfig(ExecutorConfig):
    max_tokens: int = 4096
    temperature: float | None = None
    mock_outputs: Mapping[str, Any] | str | None = None  # a file's path, or load_mock_outputs
    mock_rules: bool = False  # answers depend on the skill's rules (see the module doc)


class MockExecutor(ExecutorBase):
    name = "mock"
    can_act = True  # scripted files and tool calls (mock_work): agent suites dry-run in CI
    can_trigger = True  # `{triggered: true}` scripts the skill's invocation
    skills_dir = ".claude/skills"  # as Claude Code: what it would install or write, recorded
    context_file = "CLAUDE.md"

    def __init__(self, config: MockConfig) -> None:
        scripted = config.mock_outputs
        # the file the outputs came from, which check_run names
        self.source = Path(scripted) if isinstance(scripted, str) else None
        if isinstance(scripted, str):  # a file's path (the run's plan, create_executor(...))
            scripted = load_mock_outputs(Path(scripted))
            config = replace(config, mock_outputs=scripted)  # rebuilt elsewhere without the file
        self.config = config
        self.outputs: Mapping[str, Any] = scripted or {}

    def check_run(self, tasks: Sequence[Task], arms: Sequence[str], *, strict: bool) -> list[str]:
        """Its scripted outputs against the run (executors/mock_coverage.py): an output for a
        task the suite does not have is an error, each arm and task they leave unscripted a
        warning (with `strict`, an error)."""
        if self.source is None and not self.outputs:
            return []  # nothing scripted: every prompt gets MOCK_OUTPUT, as documented
        return check_scripted(
            self.source, self.outputs, tasks, arms, strict=strict, rules=self.config.mock_rules
        )

    def run_notes(self, tasks: Sequence[Task], arms: Sequence[str]) -> list[str]:
        """Every arm answered alike by the scripted outputs (mock_coverage.scripted_notes): its
        arms cannot differ, whatever their skills."""
        if not self.outputs or self.config.mock_rules:
            return []
        return scripted_notes(self.source, self.outputs, tasks, arms)

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        table = self.outputs
        if keyed_by_arm(table):
            table = table.get(request.arm) or {}
        default = _rule_answer(request) if self.config.mock_rules else MOCK_OUTPUT
        work = scripted(table.get(request.task.id, default))
        mode = request.settings.mode(self.config.skill_mode)
        meta = _would_deliver(request, mode)
        if request.settings.stop_on_skill and request.skill is None:  # a trigger task
            return ExecutionResult(
                failure=Failure.setup(
                    f"trigger task {request.task.id!r} needs a skill in every arm"
                )
            )
        if request.skill is not None and mode == "installed":
            if work.triggered:  # the call Claude Code makes when it loads the skill
                call = ToolCall(
                    "Skill", {"skill": request.skill.name}, output="(mock) skill loaded"
                )
                work = replace(work, tools=(*work.tools, call))
            meta["skill_invocations"] = len(skill_invocations(work.tools, request.skill.name))
        if work.files:
            if request.workspace is None:
                return ExecutionResult(
                    failure=Failure(
                        f"mock outputs script files for task {request.task.id!r}, which is not "
                        "an agent task (give it files: or allowed_tools:)"
                    )
                )
            write_files(request.workspace, work.files)
        return ExecutionResult(output=work.text, meta=meta, transcript=work.tools)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "mock",
            "model": self.config.model,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "skill_mode": self.config.skill_mode,
            "outputs": _described(self.outputs),
            **({"mock_rules": True} if self.config.mock_rules else {}),
            **(
                {"installs": "nothing (each result's meta lists what it would install)"}
                if self.config.skill_mode == "installed"
                else {}
            ),
        }

    def describe_arm(self, arm: str) -> dict[str, Any]:
        """describe() with `arm`'s own outputs alone when they are scripted per arm (the
        baseline cache's key: a changed candidate output must not miss the baseline)."""
        described = self.describe()
        outputs = described["outputs"]
        if any(name in outputs for name in ARM_NAMES):
            described["outputs"] = outputs.get(arm, {})
        return described


def _would_deliver(request: ExecutionRequest, mode: str) -> dict[str, Any]:
    """What Claude Code would get of the skill in this mode, recorded instead of written."""
    if request.skill is None:
        return {}
    if mode == "installed":
        return {"would_install": plan_install(request.skill).files}
    if mode == "context":
        plan = plan_context(request.skill)
        return {"would_write": [MockExecutor.context_file, *plan.files]}
    return {}


def _described(outputs: Mapping[str, Any]) -> Any:
    """The scripted outputs as the manifest (and the run fingerprint) names them: themselves,
    or their sha256 and size when large, so big scripted outputs never land in an artifact."""
    if _chars(outputs) <= DESCRIBED_OUTPUTS_CHARS:
        return dict(outputs)
    digest = hashlib.sha256()
    _feed(outputs, digest)
    return {"sha256": digest.hexdigest(), "chars": _chars(outputs)}


def _feed(value: Any, digest: Any) -> None:
    """Hash `value` canonically: keys sorted, each string length-prefixed (no escaping pass
    over megabytes of text, as JSON would need)."""
    if isinstance(value, str):
        data = value.encode("utf-8")
        digest.update(b"s%d:" % len(data))
        digest.update(data)
    elif isinstance(value, Mapping):
        digest.update(b"{%d:" % len(value))
        for key in sorted(value, key=str):
            _feed(str(key), digest)
            _feed(value[key], digest)
    elif isinstance(value, list | tuple):
        digest.update(b"[%d:" % len(value))
        for item in value:
            _feed(item, digest)
    else:
        digest.update(json.dumps(value, default=str).encode("utf-8"))


def _chars(value: Any) -> int:
    """About how long `value` is as JSON, counted without writing it."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, Mapping):
        return sum(len(str(k)) + _chars(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return sum(_chars(v) for v in value)
    return 8


def _rule_answer(request: ExecutionRequest) -> str:
    from .mock_model import rule_following_output

    expected = (
        request.task.judge.get("expected") if request.task.judge.get("type") == "contains" else None
    )
    if isinstance(expected, str):
        expected = [expected]
    terms = [str(e) for e in expected] if isinstance(expected, list) else []
    text = request.skill.content if request.skill is not None else ""
    return rule_following_output(text, request.task.id, request.task.category, terms)


def neutral_answer(schema: Any) -> Any:
    """A well-formed, neutral value for `schema`: objects with their required keys, numbers
    MOCK_SCORE, strings empty, lists empty, an enum's first value."""
    if not isinstance(schema, Mapping):
        return None
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties") or {}
        return {key: neutral_answer(props.get(key)) for key in schema.get("required") or ()}
    return {"number": MOCK_SCORE, "integer": 1, "string": "", "array": [], "boolean": False}.get(
        str(kind)
    )


class MockGrader:
    """Answers every judgement with `neutral_answer(schema)` through the JSON-in-text path a
    real reply takes, and keeps every request it received (`requests`, and `settings.record`
    as one JSON line each)."""

    name = "mock"

    def __init__(self, config: MockConfig, settings: GraderSettings) -> None:
        self.settings = settings
        self.requests: list[GradeRequest] = []
        self._lock = threading.Lock()

    def complete(self, request: GradeRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self.settings.record is not None:
                with open(self.settings.record, "a", encoding="utf-8") as out:
                    out.write(json.dumps(request.to_dict(), sort_keys=True) + "\n")
        tag = f"judgement-{request.nonce}"  # answered as a text judge is asked to answer
        raw = f"<{tag}>{json.dumps(neutral_answer(request.schema), sort_keys=True)}</{tag}>"
        data, error = extract_judgement(raw, request.nonce)
        return Reply(
            data,
            raw,
            Usage(),
            MOCK_MODEL,
            None if error is None else "mock grader: schema is not an object",
            scripted=True,
        )


SPEC = ExecutorSpec(
    name="mock",
    offline=True,
    skill_roots=(MockExecutor.skills_dir,),  # as Claude Code
    summary="no model calls: a fixed (or scripted) output, and a fixed 0.8 from judges",
    config_cls=MockConfig,
    schema=config_schema(
        MockConfig,
        {
            "max_tokens": {"type": "integer", "minimum": 1},
            "temperature": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            # a scripted outputs file (its path), or its contents as read by load_mock_outputs
            "mock_outputs": {"type": ["object", "string", "null"], "format": "path"},
            "mock_rules": {"type": "boolean"},
        },
    ),
    build=MockExecutor,
    grader=MockGrader,
)
