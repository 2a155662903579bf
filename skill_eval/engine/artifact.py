"""The evaluation artifact: every field of the original tool in its order, plus the run
manifest, usage and per-attempt detail; checked against the shipped JSON Schema and written
atomically. `truth_anchor` is the artifact's own absolute path."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.model import Arm, Attempt, Skill, Task, Usage
from ..core.paths import atomic_write_text, safe_component
from ..core.version import __version__
from ..errors import ArtifactError
from ..executors.catalog import is_offline, pinned_packages
from ..executors.pricing import PriceTable
from ..jail import NO_JAIL, JailUnavailable
from ..jail.providers import caps_warning, chosen, image_warning, isolated, name_of
from ..judges.base import is_deterministic
from ..judges.observers import summarise as summarise_observers
from ..stats import adaptive
from ..stats.agreement import run_agreement
from ..stats.analysis import Analysis
from ..stats.evidence import NO_EVIDENCE, of_verdict
from ..stats.results import TaskResult
from ..stats.verdict import Verdict
from . import compat, spend
from .cache import drawn_from
from .model_usage import usage_by_model

if TYPE_CHECKING:
    from ..inputs.arms import Arms
    from ..plan.run_plan import RunPlan

SCHEMA_VERSION = "1.0"


def default_path(state_root: Path, run_id: str, candidate_id: str) -> Path:
    """`<state-root>/evaluations/<run_id>-<candidate_id>.json`, ids made file-name safe."""
    name = f"{safe_component(run_id)}-{safe_component(candidate_id)}.json"
    return state_root / "evaluations" / name


def isolation(jail: str) -> dict[str, Any]:
    """The manifest's word on confinement: the jail everything the candidate controls ran
    in (references/security.md), the warning that there was none (--no-jail), or, where no
    jail can run here, that the run needed none (no agent, no code judge: `needed` false)."""
    if not isolated(jail):
        return {"jail": "none", "isolated": False, "warning": NO_JAIL}
    try:
        found: dict[str, Any] = {"jail": name_of(jail), "isolated": True}
        note = chosen(jail)
        # no process cap (a root harness's jails); an image whose agents are off their pins
        said = [w for w in (caps_warning(jail), image_warning(jail, pinned_packages())) if w]
    except JailUnavailable:  # whatever needs a jail stops before any attempt: this run did not
        return {"jail": "none", "isolated": False, "needed": False}
    if note:  # auto passed a provider over: say which and why
        found["chosen"] = note
    return {**found, "warning": "; ".join(said)} if said else found


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _usage(attempts: Sequence[Attempt], arm: str, prices: PriceTable | None) -> dict[str, Any]:
    """An arm's tokens and cost spent by this run (attempts drawn from the baseline cache were
    paid for by the run that made them: counted in `attempts` and `from_cache`, not in cost);
    model-graded judgements at `prices` (the executor's --price-file, else the built-in)."""
    mine = [a for a in attempts if a.arm == arm]
    spent = [a for a in mine if drawn_from(a) is None]
    total = sum((a.usage for a in spent), Usage())
    judged = spend.total(spent, prices)
    judges = {
        "judge_calls": judged.judge_calls,
        "judge_cost_usd": round(judged.judge_cost_usd, 6),
        "judge_tokens": judged.judge_tokens,
    }
    return {
        **total.to_dict(),
        "cost_usd": round(sum(a.cost_usd for a in spent), 6),
        "attempts": len(mine),
        "errors": sum(a.status == "error" for a in mine),
        **({"from_cache": len(mine) - len(spent)} if len(spent) < len(mine) else {}),
        **(judges if judged.judge_calls else {}),
    }


def _samples(plan: RunPlan, tasks: int) -> int:
    budget = plan.decision.budget
    return plan.sample_count if budget is None else adaptive.floor(budget, tasks)


def _skill_identity(skill: Skill | None) -> dict[str, Any]:
    """How the manifest identifies an arm's skill: the SKILL.md hash, the tree hash over all its
    files (skills/tree.py), its name, folder and origin; all null for the no-skill arm."""
    return {
        "skill_sha256": skill.sha256 if skill else None,
        "skill_tree_sha256": skill.tree_sha256 if skill else None,
        "skill_name": skill.name if skill else None,
        "skill_directory": str(skill.directory) if skill and skill.directory else None,
        "skill_origin": skill.origin if skill else None,
    }


def build(
    *,
    plan: RunPlan,
    suite: Any,
    arms: Arms,
    run_dir: Path | None,
    candidate: list[TaskResult],
    baseline: list[TaskResult],
    rates: tuple[float | None, float | None, float | None],
    verdict: Verdict,
    started_at: datetime,
    executor: dict[str, Any],
    attempts: Sequence[Attempt],
    state_root: Path,
    analysis: Analysis,
    prices: PriceTable | None = None,
) -> dict[str, Any]:
    """The artifact of a run, in the original tool's key order, then the manifest and what
    skill-eval adds (see references/artifact.md)."""
    evaluation = _evaluation(rates, verdict, analysis)
    if verdict.verdict != "skipped" and mocked(plan, arms, suite):  # no model made it
        evaluation = _after(evaluation, "verdict", "mocked", True)
    # The original evaluator's standalone fields, for the pipeline that reads them.
    task_results, counts = compat.standalone_fields(candidate)
    if plan.inputs.standalone:
        evaluation.update(counts)
    ranking = arms.ranking
    data = {
        "schema_version": SCHEMA_VERSION,
        "lane": (ranking.lane if ranking is not None else None),
        "run_id": arms.run_id,
        "stage": "evaluated",
        "status": "completed",
        "created_at": _iso(datetime.now(UTC)),
        "source_ranking_artifact": str(ranking.path) if ranking is not None else None,
        "candidate_id": arms.candidate_id,
        "candidate_score": arms.candidate_score,
        "task_suite": str(suite.path),
        "task_suite_skill_id": suite.skill_id,
        "pass_k": plan.decision.pass_k,
        "evaluation": evaluation,
        "candidate_results": [r.to_dict() for r in candidate],
        "baseline_results": [r.to_dict() for r in baseline],
        "warnings": list(arms.warnings) + list(verdict.warnings),
        "target": (ranking.target if ranking is not None else None),
        "next_step": "gate_decision",
        "next_owner": "gate",
        "truth_anchor": "",
        # The original's standalone list, after the keys whose order pipelines may rely on.
        **({"task_results": task_results} if plan.inputs.standalone else {}),
        "manifest": _manifest(plan, suite, arms, run_dir, executor, state_root, started_at),
        "comparison": analysis.comparison.to_dict() if analysis.comparison else None,
        "non_discriminating": list(analysis.non_discriminating),
        "power_hint": analysis.power_hint,
        "usage": {
            "candidate": _usage(attempts, arms.candidate.name, prices),
            "baseline": _usage(
                attempts, arms.baseline.name if arms.baseline else "baseline", prices
            ),
        },
        "errors": _errors(attempts),
    }
    _add_fired(data["manifest"]["arms"], plan, arms, attempts, suite.tasks)
    models = usage_by_model(attempts, [t.id for t in suite.tasks if t.is_trigger_task], prices)
    if models:  # a run that called no model (the mock) has none: its artifact stays as it was
        data["usage_by_model"] = models
    observed = summarise_observers(suite.tasks, attempts)
    if observed is not None:  # only suites with observers: other artifacts stay as they were
        data["observers"] = observed
    measured = run_agreement(attempts, model_graded(suite.tasks))
    if measured is not None:  # only suites with a model-graded judge
        data["judge_agreement"] = measured
    return data


def mocked(plan: RunPlan, arms: Arms, suite: Any) -> bool:
    """Whether the verdict comes from the mock executor (ExecutorSpec.offline): the attempts
    of an arm ran on it, or the model-graded judgements went to its grader."""
    from .judging import judge_backend_name

    ran = [plan.executor.name] + [
        a.executor for a in (arms.candidate, arms.baseline) if a is not None and a.executor
    ]
    if any(is_offline(name) for name in ran):
        return True
    return bool(model_graded(suite.tasks)) and is_offline(judge_backend_name(plan))


def _after(data: dict[str, Any], key: str, new: str, value: Any) -> dict[str, Any]:
    """`data` with `new` inserted right after `key` (the artifact's keys keep their order)."""
    out: dict[str, Any] = {}
    for name, item in data.items():
        out[name] = item
        if name == key:
            out[new] = value
    return out


def _evaluation(
    rates: tuple[float | None, float | None, float | None], verdict: Verdict, analysis: Analysis
) -> dict[str, Any]:
    """The `evaluation` block: rates, verdict and reason, the policy, and which failure it is."""
    cand_rate, base_rate, delta = rates
    evaluation: dict[str, Any] = {
        "execution_pass_rate": cand_rate,
        "baseline_pass_rate": base_rate,
        "delta": delta,
        "verdict": verdict.verdict,
    }
    if verdict.reason:
        evaluation["reason"] = verdict.reason
    if analysis.policy is not None and verdict.verdict != "skipped":
        evaluation["policy"] = analysis.policy.to_dict()
        evaluation["conclusion"] = analysis.conclusion
    # "Not enough evidence" apart from "shown worse"; both stay verdict fail (stats/evidence.py).
    evidence = analysis.evidence if verdict.verdict != "skipped" else NO_EVIDENCE
    evaluation.update(
        of_verdict(verdict.verdict, verdict.reason, analysis.policy, evidence).to_dict()
    )
    return evaluation


def _manifest(
    plan: RunPlan,
    suite: Any,
    arms: Arms,
    run_dir: Path | None,
    executor: dict[str, Any],
    state_root: Path,
    started_at: datetime,
) -> dict[str, Any]:
    """What ran, with what, where and when."""
    return {
        "harness": "skill-eval",
        "harness_version": __version__,
        "mode": "standalone" if plan.inputs.standalone else "pipeline",
        "task_suite": {
            "path": str(suite.path),
            "sha256": suite.sha256,
            "tasks": len(suite.tasks),
            # read from eval sets: their format, what was left out, the skill's own files
            **({"source": suite.source.to_dict()} if suite.source is not None else {}),
        },
        "arms": _arm_info(arms),
        "executor": executor,
        "model": executor.get("model"),
        "skill_mode": plan.executor.skill_mode,
        "isolation": isolation(plan.execution.jail),
        "pass_k": plan.decision.pass_k,
        # with --budget: the floor it buys per task and arm (stats/adaptive.py)
        "samples": _samples(plan, len(suite.tasks)),
        **({"budget": plan.decision.budget} if plan.decision.budget else {}),
        "run_dir": str(run_dir) if run_dir else None,
        "state_root": str(state_root),
        "config_file": plan.records.config_file,
        "started_at": _iso(started_at),
        "finished_at": _iso(datetime.now(UTC)),
    }


def _arm_info(arms: Arms) -> dict[str, Any]:
    """The candidate and baseline arms; with --arm, the arms the verdict compares (the first
    arm but the reference, and the reference), each with its name, delivery and executor."""

    def named(arm: Arm) -> dict[str, Any]:
        if arm.delivery is None:
            return {}
        return {"name": arm.name, "delivery": arm.delivery, "executor": arm.executor}

    return {
        "candidate": {
            "label": arms.candidate.label,
            **_skill_identity(arms.candidate.skill),
            **named(arms.candidate),
        },
        "baseline": None
        if arms.baseline is None
        else {
            "label": arms.baseline.label,
            "kind": arms.baseline_kind,
            **_skill_identity(arms.baseline.skill),
            **named(arms.baseline),
        },
    }


def _add_fired(
    info: dict[str, Any], plan: RunPlan, arms: Arms, attempts: Sequence[Attempt], tasks: Any
) -> None:
    """With the skill installed (--skill-mode installed, two arms): per arm that has a skill,
    whether its agent invoked it (`fired`: rate, attempts, fired), as --arm runs report it."""
    if arms.listed or plan.executor.skill_mode != "installed":
        return
    from .arm_figures import fired_figure

    for name, arm in (("candidate", arms.candidate), ("baseline", arms.baseline)):
        if arm is None or arm.skill is None or info.get(name) is None:
            continue
        mine = [a for a in attempts if a.arm == arm.name]
        info[name]["fired"] = fired_figure(replace(arm, delivery="installed"), mine, tasks)


def _errors(attempts: Sequence[Attempt]) -> list[dict[str, Any]]:
    """Every attempt that ended in error, in (arm, task, index) order."""
    return [
        {"arm": a.arm, "task_id": a.task_id, "index": a.index, "error": a.error}
        for a in sorted(attempts, key=lambda a: (a.arm, a.task_id, a.index))
        if a.status == "error"
    ]


def model_graded(tasks: Sequence[Task]) -> list[str]:
    """The ids of the tasks whose judge asks a model (trigger tasks' implied judge does not)."""
    return [t.id for t in tasks if not t.is_trigger_task and not is_deterministic(t.judge)]


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    shipped = resources.files("skill_eval") / "schemas" / "evaluation.schema.json"
    return json.loads(shipped.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def validate(data: Any, where: str = "artifact") -> None:
    """Raise ArtifactError naming the first few fields that do not match the schema."""
    from ..core.validation import schema_problems  # jsonschema only when an artifact is checked

    problems = schema_problems(data, schema(), path=where)
    if problems:
        raise ArtifactError("\n".join(str(p) for p in problems[:5]))


def write(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """Set truth_anchor, validate and write atomically. Returns the data as written."""
    data = dict(data, truth_anchor=str(path.resolve()))
    validate(data)
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return data


def write_unique(data: dict[str, Any], path: Path) -> tuple[dict[str, Any], Path]:
    """Write at `path` (the default `<run_id>-<candidate_id>.json`) when it is free or holds
    this same run's artifact (a resumed run rewrites its own); else at `<stem>-2.json`,
    `-3`, ... Creating the file with O_EXCL claims the name, so two runs never share one
    (last writer wins no more). Returns the data as written and the path used."""
    path.parent.mkdir(parents=True, exist_ok=True)
    run_dir = (data.get("manifest") or {}).get("run_dir")
    n = 1
    while True:
        target = path if n == 1 else path.with_name(f"{path.stem}-{n}{path.suffix}")
        try:
            os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except FileExistsError:
            if run_dir is None or _run_dir_of(target) != run_dir:
                n += 1
                continue
        return write(data, target), target


def _run_dir_of(path: Path) -> str | None:
    try:
        found = json.loads(path.read_text(encoding="utf-8")).get("manifest", {}).get("run_dir")
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


# What a file given as an artifact that is none is told: what an artifact is, and where.
WHAT_IS_ONE = (
    "an artifact is what `skill-eval run` writes, <state-root>/evaluations/*.json (the path "
    "it prints on stdout; .skill-eval/ by default)"
)


def read(path: Path) -> dict[str, Any]:
    """Read an artifact and check it against the schema; a file that is no artifact at all
    (an eval set, a suite) is said to be none, with what is one, not by its missing fields."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ArtifactError(f"artifact not found: {path}") from None
    except (OSError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        msg = f"{path}: not a readable JSON artifact ({reason}); {WHAT_IS_ONE}"
        raise ArtifactError(msg) from None
    if not isinstance(data, dict) or not {"schema_version", "evaluation"} & set(data):
        raise ArtifactError(f"{path}: not an evaluation artifact; {WHAT_IS_ONE}")
    validate(data, str(path))
    return data
