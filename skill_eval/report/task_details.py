"""Per-task, per-attempt details of a run, read defensively from an artifact or a run's
journal (attempts.jsonl): what the HTML report and `skill-eval show` draw beyond the summary
(report/view.py): every attempt's output (its preview when long, and the blob holding the
whole), each judge's mark, rubric dimensions and findings, changed files and transcript, and
the task's prompt when the suite can still be read.

Model and judge text is kept as it is (the renderers escape it); only ids and short lines
pass through `one_line`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.blobs import OutputRef, TranscriptRef, read_checked
from .text import one_line

ARMS = ("candidate", "baseline")
SEVERITY_ORDER = ("blocker", "important", "suggestion")
MARKS = {"passed": "✓", "failed": "✗", "error": "!"}


@dataclass(frozen=True)
class JudgeMark:
    """One judge's say on one attempt: the composite's parts each get one, else the judge."""

    name: str
    status: str  # passed | failed | error
    score: float | None
    short: str  # the first line of its details or error

    @property
    def mark(self) -> str:
        return MARKS.get(self.status, "?")


@dataclass(frozen=True)
class AttemptDetail:
    arm: str
    index: int
    status: str
    output: str
    score: float | None
    details: str  # the judge's full details (or the attempt's error)
    marks: tuple[JudgeMark, ...]
    dimensions: tuple[Mapping[str, Any], ...] = ()
    findings: tuple[Mapping[str, Any], ...] = ()  # sorted by severity
    files: tuple[Mapping[str, Any], ...] = ()
    transcript: tuple[Mapping[str, Any], ...] = ()
    cost_usd: float = 0.0
    duration_ms: int = 0
    observations: Mapping[str, Any] = field(default_factory=dict)  # non-gating observers
    # When `output` is a preview: the blob with the whole output (absolute when the run
    # directory is known), and its size in bytes; `output_cut_from` when the executor's output
    # was cut at --max-output-bytes (the size it had).
    output_blob: str | None = None
    output_size: int | None = None
    output_cut_from: int | None = None
    # When `transcript` holds only the first and last calls of a stored one: how many it has.
    transcript_calls: int | None = None

    @property
    def output_blob_uri(self) -> str | None:
        """A link to the blob for the HTML report: a file:// URI when its path is known."""
        if self.output_blob is None:
            return None
        path = Path(self.output_blob)
        return path.as_uri() if path.is_absolute() else self.output_blob

    def full_output(self) -> str:
        """The whole output, read from its blob when `output` is a preview (OSError when the
        blob is not there: an artifact from another machine)."""
        if self.output_blob is None:
            return self.output
        path = Path(self.output_blob)  # blobs/<sha256>: its name is its checksum
        return read_checked(path, path.name).decode("utf-8", "replace")


@dataclass(frozen=True)
class TaskDetail:
    task_id: str
    prompt: str | None
    attempts: dict[str, list[AttemptDetail]] = field(default_factory=dict)  # arm -> attempts

    @property
    def flaky(self) -> bool:
        return any(
            len({a.status for a in arm if a.status != "error"}) > 1
            for arm in self.attempts.values()
        )

    @property
    def has_error(self) -> bool:
        return any(a.status == "error" for arm in self.attempts.values() for a in arm)


def _first_line(text: Any) -> str:
    """The line that sums `text` up: its first, joined with the next when the first only
    introduces a list (`1 of 1 test(s) failed or errored:` is followed by the first failing
    test and its assertion, which is what a reader of `show` needs)."""
    lines = [line for line in str(text or "").splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].rstrip().endswith(":"):
        return one_line(f"{lines[0]} {lines[1]}")
    return one_line(lines[0]) if lines else ""


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _status_of(judge: Mapping[str, Any]) -> str:
    return "error" if judge.get("error") else "passed" if judge.get("passed") else "failed"


def judge_marks(attempt: Mapping[str, Any], judge_name: str = "judge") -> tuple[JudgeMark, ...]:
    """Each judge's mark on an attempt: the parts of a composite judge, else the one judge
    (`judge_name`: its type in the suite); an attempt that ended in error before judging gets
    one `!` with its error."""
    judge = attempt.get("judge")
    if not isinstance(judge, Mapping):
        return (JudgeMark("run", "error", None, _first_line(attempt.get("error") or "error")),)
    data = _mapping(judge.get("data"))
    parts = _mapping(data.get("composite")).get("parts")
    if isinstance(parts, Mapping) and parts:
        return tuple(
            JudgeMark(
                one_line(name),
                _status_of(p),
                _float(p.get("score")),
                _first_line(p.get("error") or p.get("details")),
            )
            for name, p in parts.items()
            if isinstance(p, Mapping)
        )
    return (
        JudgeMark(
            one_line(judge_name),
            _status_of(judge),
            _float(judge.get("score")),
            _first_line(judge.get("error") or judge.get("details")),
        ),
    )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _evaluation(judge: Any) -> Mapping[str, Any]:
    data = judge.get("data") if isinstance(judge, Mapping) else None
    ev = data.get("evaluation") if isinstance(data, Mapping) else None
    return ev if isinstance(ev, Mapping) else {}


def _mappings(value: Any) -> tuple[Mapping[str, Any], ...]:
    return tuple(v for v in value if isinstance(v, Mapping)) if isinstance(value, list) else ()


def attempt_detail(
    arm: str, attempt: Mapping[str, Any], judge_name: str = "judge", run_dir: Path | None = None
) -> AttemptDetail:
    judge = _mapping(attempt.get("judge"))
    ev = _evaluation(judge)
    rank = {s: i for i, s in enumerate(SEVERITY_ORDER)}
    findings = sorted(
        _mappings(ev.get("findings")), key=lambda f: rank.get(str(f.get("severity")), len(rank))
    )
    files = attempt.get("files")
    status = str(attempt.get("status") or _status_of(judge or {"error": "no judge"}))
    ref = OutputRef.from_dict(attempt)
    return AttemptDetail(
        arm=arm,
        index=int(attempt.get("index") or 0),
        status=status,
        output="" if attempt.get("output") is None else str(attempt["output"]),
        score=_float(judge.get("score")),
        details=str(attempt.get("error") or judge.get("error") or judge.get("details") or ""),
        marks=judge_marks(attempt, judge_name),
        dimensions=_mappings(ev.get("dimensions")),
        findings=tuple(findings),
        files=_mappings(files.get("files")) if isinstance(files, Mapping) else (),
        transcript=_mappings(attempt.get("transcript")),
        cost_usd=_float(attempt.get("cost_usd")) or 0.0,
        duration_ms=int(_float(attempt.get("duration_ms")) or 0),
        observations=_mapping(attempt.get("observations")),
        output_blob=_blob_of(ref, run_dir),
        output_size=ref.size if ref else None,
        output_cut_from=ref.cut_from if ref else None,
        transcript_calls=calls.calls if (calls := TranscriptRef.from_dict(attempt)) else None,
    )


def _blob_of(ref: OutputRef | None, run_dir: Path | None) -> str | None:
    if ref is None or ref.blob is None:
        return None
    return str(run_dir / ref.blob) if run_dir is not None else ref.blob


def _suite_tasks(suite_path: Any) -> dict[str, tuple[str, str]]:
    """(prompt, judge type) by task id, or {} when the suite cannot be read any more (the
    artifact may come from another machine)."""
    if not suite_path:
        return {}
    from ..errors import SkillEvalError
    from ..inputs.suite import load_suite

    try:
        return {
            t.id: (t.prompt, str(t.judge.get("type") or "judge"))
            for t in load_suite(str(suite_path)).tasks
        }
    except (SkillEvalError, OSError, ValueError):
        return {}


def _group(
    rows: Iterable[tuple[str, Mapping[str, Any]]],
    suite: Mapping[str, tuple[str, str]],
    run_dir: Path | None,
    arm_order: Sequence[str] = ARMS,
) -> list[TaskDetail]:
    """Attempts by task, each task's arms in `arm_order` (an arm it does not name last)."""
    tasks: dict[str, TaskDetail] = {}
    for arm, attempt in rows:
        task_id = one_line(attempt.get("task_id"))
        prompt, judge_name = suite.get(task_id, (None, "judge"))
        task = tasks.setdefault(task_id, TaskDetail(task_id, prompt))
        task.attempts.setdefault(arm, []).append(attempt_detail(arm, attempt, judge_name, run_dir))
    for task in tasks.values():
        for attempts in task.attempts.values():
            attempts.sort(key=lambda a: a.index)
        rank = {arm: i for i, arm in enumerate(arm_order)}
        arms = sorted(task.attempts.items(), key=lambda item: rank.get(item[0], len(rank)))
        task.attempts.clear()
        task.attempts.update(arms)
    order = {task_id: i for i, task_id in enumerate(suite)}  # a journal is in finishing order
    return sorted(tasks.values(), key=lambda t: order.get(t.task_id, len(order)))


def from_artifact(
    artifact: Mapping[str, Any], *, with_prompts: bool = True, every_arm: bool = False
) -> list[TaskDetail]:
    """Every task of an artifact with its attempts per arm, in the artifact's order: the
    candidate's and the baseline's, or with `every_arm` each --arm arm's under its name (the
    artifact's `arms` section; a two-arm artifact has none and gives candidate/baseline)."""
    suite = _suite_tasks(artifact.get("task_suite")) if with_prompts else {}
    listed = _listed_arms(artifact) if every_arm else []
    tables = (
        [(str(arm.get("name")), arm.get("results")) for arm in listed]
        if listed
        else [(arm, artifact.get(f"{arm}_results")) for arm in ARMS]
    )
    rows: list[tuple[str, Mapping[str, Any]]] = []
    for arm, results in tables:
        for result in _mappings(results):
            rows += [(arm, {**a, "task_id": result.get("task_id")}) for a in _attempts(result)]
    run_dir = _mapping(artifact.get("manifest")).get("run_dir")  # where the blobs are
    return _group(
        rows,
        suite,
        Path(run_dir) if isinstance(run_dir, str) and run_dir else None,
        [arm for arm, _ in tables],
    )


def _listed_arms(artifact: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The arms of an --arm artifact (`arms.arms`, each with its name and results), in order."""
    arms = _mapping(artifact.get("arms")).get("arms")
    return [a for a in _mappings(arms) if isinstance(a.get("name"), str) and a.get("name")]


def _attempts(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A task result's attempts; one made of the result itself when it kept none."""
    attempts = _mappings(result.get("attempts"))
    if attempts:
        return list(attempts)
    return [
        {
            "index": 0,
            "status": result.get("status"),
            "error": result.get("error"),
            "judge": {
                "passed": result.get("passed"),
                "score": result.get("score"),
                "details": result.get("details"),
                "error": result.get("error"),
            },
        }
    ]


def read_journal(run_dir: Path) -> tuple[dict[str, Any], list[TaskDetail]]:
    """(run.json, tasks) of a run directory; lines that are not JSON objects are skipped (a
    run stopped mid-write leaves a partial last line). A task retried later (`--resume`,
    `rejudge`) shows its last record per attempt. An --arm run's attempts are under their
    arms' names, in the order run.json lists the arms."""
    meta = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    meta = meta if isinstance(meta, dict) else {}
    latest: dict[tuple[str, str, Any], Mapping[str, Any]] = {}
    with (run_dir / "attempts.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            # an attempt names its arm; a note (`{"record": kind, ...}`) is not an attempt
            if isinstance(record, dict) and "record" not in record:
                arm = record.get("arm")
                if isinstance(arm, str) and arm:
                    latest[(arm, str(record.get("task_id")), record.get("index"))] = record
    rows = [(arm, record) for (arm, _t, _i), record in latest.items()]
    return meta, _group(rows, _suite_tasks(meta.get("task_suite")), run_dir, _journal_arms(meta))


def _journal_arms(meta: Mapping[str, Any]) -> list[str]:
    """The arms run.json lists (--arm), else candidate and baseline."""
    listed = _mapping(meta.get("arms")).get("listed")
    names = [str(a.get("name")) for a in _mappings(listed) if a.get("name")]
    return names or list(ARMS)
