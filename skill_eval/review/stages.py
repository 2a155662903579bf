"""The four stages of `skill-eval review`: orchestrator, builder, QA, visionary.

Each stage is a function of the goal and the previous stage's output only (no hidden state
crosses a boundary), saves its input and output under the round's directory, and is a goal
gate: a reply that cannot be used goes back to the same role with the problems found, a few
times, before the review stops with ReviewError.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.model import Usage
from ..core.tagged import new_nonce
from ..errors import SkillEvalError
from .decision import Decision, decision_format, parse_decision
from .draft import SUITE_FILE, draft_files, parse_builder_reply, validate_draft, write_draft
from .goal import Goal
from .models import RoleModel
from .plan import Plan, checklist_markdown, parse_plan
from .qa import QAFn
from .qa_report import build_qa_report, task_links
from .store import ReviewStore

BUILDER_RETRIES = 3  # the builder's goal gate: retries after the first draft
GATE_RETRIES = 2  # orchestrator and visionary: retries of a reply that cannot be read


class ReviewError(SkillEvalError):
    """A stage whose goal gate stayed unsatisfied after its retries."""

    exit_code = 3  # the model service failed the review, not the user's input


@dataclass(frozen=True)
class Stages:
    """What the stages share that is not state: the model, the role prompts, where the record
    goes, the QA function and its sample count."""

    model: RoleModel
    roles: dict[str, str]
    store: ReviewStore
    qa_fn: QAFn
    samples: int = 2
    builder_retries: int = BUILDER_RETRIES
    gate_retries: int = GATE_RETRIES
    usage: dict[str, dict[str, Any]] = field(default_factory=dict)  # per role, for the record

    def ask(self, number: int, name: str, role: str, prompt: str) -> str:
        self.store.save(number, f"{name}.input", prompt)
        reply = self.model.complete(role, self.roles[role], prompt)
        self.store.save(number, f"{name}.output", reply.text)
        seen = self.usage.setdefault(role, {"calls": 0, "models": [], "tokens": Usage()})
        seen["calls"] += 1
        seen["tokens"] += reply.usage
        if reply.model and reply.model not in seen["models"]:
            seen["models"].append(reply.model)
        return reply.text

    def usage_summary(self) -> dict[str, dict[str, Any]]:
        return {
            role: {"calls": u["calls"], "models": list(u["models"]), **u["tokens"].to_dict()}
            for role, u in self.usage.items()
        }


def _attempt_name(stage: str, attempt: int) -> str:
    return stage if attempt == 0 else f"{stage}.attempt-{attempt + 1}"


def _problems_block(title: str, problems: list[str]) -> str:
    return f"\n## {title}\n" + "\n".join(f"- {p}" for p in problems) + "\n"


def feedback_block(decision: Decision, number: int) -> str:
    """The visionary's output as the orchestrator reads it: summary and numbered points."""
    lines = [
        f"## Visionary feedback on round {number}",
        f"Decision: {decision.decision}",
        f"Summary: {decision.summary}",
        "",
        "Address every point below in a '## Feedback addressed' section, one line each:",
    ]
    lines += [f"- [{fid}] {text}" for fid, text in decision.feedback_points()]
    for dim, entry in decision.dimensions.items():
        if entry.get("notes"):
            lines.append(f"- ({dim}: {entry['rating']}) {entry['notes']}")
    return "\n".join(lines) + "\n"


def orchestrate(st: Stages, goal: Goal, number: int, feedback: Decision | None) -> Plan:
    """Stage 1: the delegation plan, from the goal (with the skill's files) and, after the
    first round, the visionary's feedback, every point of which the plan must address."""
    base = goal.with_files()
    ids: list[str] = []
    if feedback is not None:
        base += "\n" + feedback_block(feedback, number - 1)
        ids = [fid for fid, _ in feedback.feedback_points()]
    prompt = base
    for attempt in range(st.gate_retries + 1):
        text = st.ask(number, _attempt_name("orchestrator", attempt), "orchestrator", prompt)
        plan, problems = parse_plan(text, ids)
        if not problems:
            st.store.save(number, "orchestrator.plan", plan.to_dict())
            return plan
        prompt = base + _problems_block(
            "Problems with your previous plan (write it again, whole)", problems
        )
    raise ReviewError(
        f"round {number}: the orchestrator gave no usable plan after "
        f"{st.gate_retries + 1} tries: {problems[0]}"
    )


def build(st: Stages, goal: Goal, number: int, plan: Plan) -> Path:
    """Stage 2: the draft suite folder, from the goal's brief and the plan. A draft that does
    not validate goes back to the builder with the validation messages and its own files."""
    base = goal.brief() + "\n## Delegation plan\n" + plan.text.strip() + "\n"
    draft = st.store.round_dir(number) / "suite"
    prompt = base
    problems: list[str] = []
    for attempt in range(st.builder_retries + 1):
        text = st.ask(number, _attempt_name("builder", attempt), "builder", prompt)
        files, _rationale, problems = parse_builder_reply(text)
        if not problems:
            write_draft(files, draft)
            problems = validate_draft(draft)
        elif draft.is_dir():  # an unreadable reply: no older draft passes for its files
            shutil.rmtree(draft)
        st.store.save(
            number,
            _attempt_name("builder", attempt) + ".validation",
            {"valid": not problems, "problems": problems, "files": sorted(files)},
        )
        if not problems:
            return draft
        prompt = base + _problems_block(
            "Validation errors in your previous draft (fix every "
            "one and send the complete suite again)",
            problems,
        )
        if draft.is_dir():
            shown = draft_files(draft)
            prompt += "\n## Your previous draft\n" + "".join(
                f"=== FILE: {p} ===\n{t.rstrip()}\n=== END FILE ===\n" for p, t in shown.items()
            )
    raise ReviewError(
        f"round {number}: the builder's suite is still invalid after "
        f"{st.builder_retries} retries: {problems[0]}"
    )


def run_qa(
    st: Stages, goal: Goal, number: int, plan: Plan, draft: Path
) -> tuple[str, dict[str, Any]]:
    """Stage 3: skill-eval runs the draft suite (the skill vs no skill) and the report lists,
    per checklist item of the plan, its tasks, outcome and evidence."""
    suite_path = draft / SUITE_FILE
    st.store.save(
        number,
        "qa.input",
        {
            "suite": str(suite_path),
            "skill": str(goal.skill_path),
            "samples": st.samples,
            "checklist": checklist_markdown(plan),
        },
    )
    result = st.qa_fn(suite_path, goal.skill_path, st.samples)
    report, data = build_qa_report(plan.checklist, task_links(suite_path), result, st.samples)
    st.store.save(number, "qa.output", report)
    st.store.save(number, "qa.output", data)
    return report, data


def envision(st: Stages, goal: Goal, number: int, report: str) -> Decision:
    """Stage 4: the visionary's decision, from the goal's brief and the QA report only, read
    from between the tags of each call's own nonce (review/decision.py)."""
    base = goal.brief() + f"\n## QA report (round {number})\n" + report
    extra = ""
    problems: list[str] = []
    for attempt in range(st.gate_retries + 1):
        nonce = new_nonce()  # per call, made after the report: the report cannot hold it
        prompt = base + extra + decision_format(nonce)
        text = st.ask(number, _attempt_name("visionary", attempt), "visionary", prompt)
        decision, problems = parse_decision(text, nonce)
        if decision is not None:
            st.store.save(number, "visionary.decision", decision.to_dict())
            return decision
        extra = _problems_block(
            "Problems with your previous reply (answer again, between this call's tags)",
            problems,
        )
    raise ReviewError(
        f"round {number}: the visionary gave no usable decision after "
        f"{st.gate_retries + 1} tries: {problems[0]}"
    )
