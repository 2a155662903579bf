"""The data skill-eval passes around: suites, skills, arms, attempts and results.

All are frozen dataclasses; results have `to_dict()` for the journal and the artifact.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from .blobs import OutputRef, TranscriptRef, read_checked
from .execution import Delivery, ExecutionSettings
from .execution import ExecutionRequest as ExecutionRequest  # re-exported: the seam's records
from .execution import ExecutionResult as ExecutionResult
from .execution import ModelCall as ModelCall
from .execution import SkillMode as SkillMode
from .execution import Usage as Usage
from .work import Snapshot, ToolCall, Work

Status = Literal["passed", "failed", "error"]
# An arm is named by its label: any string, unique within an evaluation (`evaluate` takes any
# number of arms). The two-arm run of `skill-eval run` and its artifact use ARM_NAMES.
ArmName = str
ARM_NAMES: tuple[str, ...] = ("candidate", "baseline")
# Whether a judge error may heal on a retry (timeouts, rate limits, overload, 5xx, dropped
# connections, a judge model's unparseable reply) or will recur (missing module or fixture,
# bad config, a judge that raises). Decided by the judge that knows the cause.
ErrorKind = Literal["transient", "permanent"]
DEFAULT_TIMEOUT_SECONDS = 300.0


def clean_text(text: str) -> str:
    """Text with lone surrogates (which no UTF-8 file can hold) replaced by U+FFFD."""
    if text.isascii():  # constant time in CPython: most outputs need no encoding to check
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Task:
    """One task of a suite: a prompt and the judge that decides whether an output passes."""

    id: str
    prompt: str
    judge: Mapping[str, Any]
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    description: str = ""
    category: str | None = None
    index: int = 0
    # Agent tasks: suite-relative input files copied into the attempt's workspace, the tools
    # the agent may use (None: the executor's default) and a turn limit (None: the default).
    files: tuple[str, ...] = ()
    allowed_tools: tuple[str, ...] | None = None
    max_turns: int | None = None
    # Non-gating observers that run on this task (observers.for_task: the suite's that target
    # it plus its own); their readings never decide anything.
    observers: tuple[Mapping[str, Any], ...] = ()
    # Trigger tasks (judges/triggers/): does the skill's description make Claude load it for this
    # query? `prompt` then holds the query too, and `judge` the implied trigger judge.
    query: str | None = None
    should_trigger: bool | None = None
    # A known-good output (inputs/reference.py): text, or {text, files, tools} in the mock
    # output form. Never sent to a model; `validate` and `run` check the judges on it.
    reference: str | Mapping[str, Any] | None = None
    # How its kind makes executors run it, set by that kind's loader (trigger tasks); None:
    # as the run is configured, with the task's own turn limit and tools.
    execution: ExecutionSettings | None = None

    def execution_settings(self) -> ExecutionSettings:
        """What every ExecutionRequest of this task carries (`ExecutionRequest.settings`)."""
        own = self.execution or ExecutionSettings(tools=self.allowed_tools)
        return own if self.max_turns is None else replace(own, max_turns=self.max_turns)

    @property
    def is_trigger_task(self) -> bool:
        """A `{query, should_trigger}` task: judged by whether the arm's skill was invoked."""
        return self.should_trigger is not None

    @property
    def is_agent_task(self) -> bool:
        """A task whose work is files and tool calls, not only text: it needs an executor
        that can act (`ExecutorBase.can_act`)."""
        return bool(self.files) or self.allowed_tools is not None


@dataclass(frozen=True)
class SuiteSource:
    """What a suite was read from when it is not a suite file of ours: an eval set, a trigger
    set or a skill's `evals/` folder (inputs/evalsets/). `data` is the suite it maps to, as a
    task_suite.yaml would hold it (what `import` and a run's record write); `not_carried_over`
    names, one line each, what of the files has no place in it; `warnings` what the run must
    say (a skill's own files given as an eval's input, a skill name that is not the folder's)."""

    format: str
    files: tuple[Path, ...]
    data: Mapping[str, Any]
    not_carried_over: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    # task id -> the skill's own files an eval gives as input (the baseline sees them too)
    skill_files: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    origins: tuple[str, ...] = ()  # per task, where in the files it came from: `evals[3]`

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "files": [str(f) for f in self.files],
            "not_carried_over": list(self.not_carried_over),
            "skill_files_as_inputs": {k: list(v) for k, v in self.skill_files.items()},
        }


@dataclass(frozen=True)
class Suite:
    """A validated task suite. `path` is absolute (a suite file, an eval set, or a skill
    folder whose evals it holds); input files and fixtures resolve against `directory`: the
    suite file's folder, or `root` when the suite was read from eval sets (the skill root)."""

    path: Path
    skill_id: str
    version: str
    tasks: tuple[Task, ...]
    sha256: str
    description: str = ""
    root: Path | None = None
    source: SuiteSource | None = None

    @property
    def directory(self) -> Path:
        return self.root if self.root is not None else self.path.parent

    def task(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)


@dataclass(frozen=True)
class Skill:
    """A skill under test: the SKILL.md text, and the directory it came from when there is one.

    `tree_sha256` identifies the whole skill (every file's path and content, SKILL.md as
    `content`; skills.tree); load_skill sets it, None when a skill was built by hand."""

    name: str
    content: str
    directory: Path | None = None
    origin: str = ""
    tree_sha256: str | None = None

    @property
    def sha256(self) -> str:
        return sha256_text(self.content)


@dataclass(frozen=True)
class Arm:
    """One variant under test, named by `name` (its label in results and the journal);
    `skill` is None for the no-skill arm; `label` describes it for people.

    An arm of a run that compares agents and deliveries (`--arm NAME=EXECUTOR:DELIVERY`) also
    says how its skill reaches the model (`delivery`: its attempts run in that skill mode, and
    a `nudged` arm's prompts end with core.execution.NUDGE) and which registered executor runs
    it (`executor`), and the model it runs on when it names one (`model`; None: the
    executor's own). All None: as the evaluation's executor is configured (the two-arm run)."""

    name: ArmName
    skill: Skill | None
    label: str = ""
    delivery: Delivery | None = None
    executor: str | None = None
    model: str | None = None

    @property
    def skill_sha256(self) -> str | None:
        return self.skill.sha256 if self.skill else None


@dataclass(frozen=True)
class JudgeResult:
    """What a judge says of one output. `error` is set when the judge itself could not judge;
    `error_kind` then says whether a retry may help (unset counts as permanent: only a judge
    that knows its cause is passing can ask for a retry). `calls` are the model calls the
    judgement made, each with its model and usage, recorded at the grader seam
    (judges/base.py `run_judge`), whatever the judge writes in its `data`: what the run's
    meter and the artifact's usage sum."""

    passed: bool
    score: float
    details: str = ""
    error: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    error_kind: ErrorKind | None = None
    calls: tuple[ModelCall, ...] = ()

    @property
    def transient(self) -> bool:
        """True when the judge could not judge for a reason a retry may cure."""
        return self.error is not None and self.error_kind == "transient"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "passed": self.passed,
            "score": self.score,
            "details": self.details,
            "error": self.error,
        }
        if self.error is not None:
            out["error_kind"] = "transient" if self.transient else "permanent"
        if self.data:
            out["data"] = dict(self.data)
        if self.calls:
            out["calls"] = [call.to_dict() for call in self.calls]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeResult:
        calls = data.get("calls")
        return cls(
            passed=bool(data["passed"]),
            score=float(data["score"]),
            details=str(data.get("details") or ""),
            error=data.get("error"),
            data=dict(data.get("data") or {}),
            error_kind=data.get("error_kind")
            if data.get("error_kind") in ("transient", "permanent")
            else None,
            calls=tuple(ModelCall.from_dict(c) for c in calls if isinstance(c, Mapping))
            if isinstance(calls, list)
            else (),
        )

    @classmethod
    def failure(
        cls, error: str, *, transient: bool = False, details: str | None = None
    ) -> JudgeResult:
        """The judge could not judge: not the skill's fault. `transient` when a retry may
        help; `details` (default: the error) may add what the error line leaves out."""
        return cls(
            passed=False,
            score=0.0,
            details=error if details is None else details,
            error=error,
            error_kind="transient" if transient else "permanent",
        )


@dataclass(frozen=True)
class Attempt:
    """One execution of one task with one arm, with its judgement, as journaled.

    `output`, `transcript` and `files` are what the attempt produced (see `load_work`); `meta` is
    what the executor reported about the call (latency, stop reason, model id, ...).
    Once journaled (engine/attempt_store.py), a long output is held as its preview:
    `output_ref.blob` names the blob with the whole of it under `blob_root` (the run
    directory), and `load_work()` reads it from there; likewise a long transcript
    (`transcript_ref`)."""

    arm: ArmName
    task_id: str
    index: int
    status: Status
    output: str
    judge: JudgeResult | None
    error: str | None
    duration_ms: int
    tries: int = 1
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    started_at: str = ""
    finished_at: str = ""
    transcript: tuple[ToolCall, ...] = ()
    files: Snapshot | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    # Observer name -> its reading (judges/observers.py); never part of the status.
    observations: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    output_ref: OutputRef | None = None  # size, sha256, blob (None: records before blobs)
    transcript_ref: TranscriptRef | None = None  # set when the transcript is a blob
    blob_root: Path | None = field(default=None, compare=False)  # where blobs/ is

    def load_work(self) -> Work:
        """What the judges read: the whole output and transcript, read from their blobs when
        the attempt holds previews (FileNotFoundError when a blob is gone)."""
        ref = self.output_ref
        return Work(
            text=self.full_output(),
            transcript=self.full_transcript(),
            files=self.files,
            text_sha256=ref.sha256 if ref else None,
            meta=self.meta,
        )

    def full_output(self) -> str:
        """The whole output: `output`, or its blob when `output` is a preview."""
        ref = self.output_ref
        if ref is None or ref.blob is None:
            return self.output
        return self._blob(ref.blob, ref.sha256).decode("utf-8", "replace")

    def full_transcript(self) -> tuple[ToolCall, ...]:
        ref = self.transcript_ref
        if ref is None:
            return self.transcript
        try:
            calls = json.loads(self._blob(ref.blob, ref.sha256))
            return tuple(ToolCall.from_dict(c) for c in calls)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            raise FileNotFoundError(f"{ref.blob}: not a stored transcript ({exc})") from None

    def _blob(self, rel: str, sha256: str) -> bytes:
        """A blob's bytes, checked against its sha256 (FileNotFoundError when it is gone or
        is not what the record says)."""
        if self.blob_root is None:
            raise FileNotFoundError(f"{rel}: the attempt does not know its run directory")
        return read_checked(self.blob_root / rel, sha256)

    def to_dict(self) -> dict[str, Any]:
        """The journal record. Transcript, files and meta appear only when there are some,
        so a text attempt's record is what it was before they existed."""
        out = {
            "arm": self.arm,
            "task_id": self.task_id,
            "index": self.index,
            "status": self.status,
            "output": self.output,
            **(self.output_ref.to_dict() if self.output_ref else {}),
            "judge": self.judge.to_dict() if self.judge else None,
            "error": self.error,
            "duration_ms": self.duration_ms,
            "tries": self.tries,
            "usage": self.usage.to_dict(),
            "cost_usd": self.cost_usd,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
        }
        out.update(Work(transcript=self.transcript, files=self.files).to_dict())
        if self.transcript_ref is not None:
            out.update(self.transcript_ref.to_dict())
        if self.meta:
            out["meta"] = _jsonable(self.meta)
        if self.observations:  # omitted when empty: artifacts without observers are unchanged
            out["observations"] = _jsonable(self.observations)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], blob_root: Path | None = None) -> Attempt:
        """An attempt from its record; `blob_root` is the directory its blobs are under (the
        run directory of its journal). Records written before blobs hold outputs inline."""
        judge = data.get("judge")
        work = Work.from_dict(str(data.get("output") or ""), data)
        meta = data.get("meta")
        observations = data.get("observations")
        return cls(
            arm=data["arm"],
            task_id=str(data["task_id"]),
            index=int(data["index"]),
            status=data["status"],
            output=str(data.get("output") or ""),
            judge=JudgeResult.from_dict(judge) if judge else None,
            error=data.get("error"),
            duration_ms=int(data.get("duration_ms") or 0),
            tries=int(data.get("tries") or 1),
            usage=Usage.from_dict(data.get("usage")),
            cost_usd=float(data.get("cost_usd") or 0.0),
            started_at=str(data.get("started_at") or ""),
            finished_at=str(data.get("finished_at") or ""),
            transcript=work.transcript,
            files=work.files,
            meta=dict(meta) if isinstance(meta, Mapping) else {},
            observations=dict(observations) if isinstance(observations, Mapping) else {},
            output_ref=OutputRef.from_dict(data),
            transcript_ref=TranscriptRef.from_dict(data),
            blob_root=blob_root,
        )


def _jsonable(value: Mapping[str, Any]) -> dict[str, Any]:
    """A plain JSON copy: executors put what they like in `meta`; the journal needs JSON."""
    return json.loads(json.dumps(dict(value), default=str))  # type: ignore[no-any-return]


def status_of(judge: JudgeResult) -> Status:
    if judge.error:
        return "error"
    return "passed" if judge.passed else "failed"
