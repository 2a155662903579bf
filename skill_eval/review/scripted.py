"""The built-in scripted role model of `skill-eval review --mock`: a test double, not a
reviewer. Without Claude Code or a key, and without a `--mock-replies` file, it answers each
role in the format the real parsers read (a plan, a suite with its mock outputs, a decision),
so the whole pipeline (validation, QA through `run_evaluation`, the records) runs offline on
any skill. No model reads the skill: the decision says so in its caveats.
"""

from __future__ import annotations

import json
import re

import yaml

from ..core.model import Usage
from ..executors.text_model import TextModelError, TextReply
from .decision import VISION_DIMENSIONS
from .draft import MOCK_OUTPUTS_FILE, SUITE_FILE
from .goal import Goal

MARK = "SCRIPTED-REVIEW-MARK"  # what the candidate's scripted answers carry, the baseline's not
DRY_RUN = (
    "a dry run of the review pipeline (--mock, built-in scripted replies): no model "
    "read the skill; run without --mock, or with --mock-replies FILE, for a review"
)


def with_answer_tags(reply: str, prompt: str) -> str:
    """A scripted reply with its `<decision>` and `</decision>` placeholders turned into the
    tags the prompt asks for (`<decision-NONCE>`, the nonce of that call), as a model that
    follows the instructions would write them. A prompt naming no such tag leaves it as it is."""
    asked = re.findall(r"<(decision-[0-9a-f]+)>", prompt)
    if not asked:
        return reply
    tag = asked[-1]  # the instruction ends the prompt; anything earlier is quoted material
    return reply.replace("<decision>", f"<{tag}>").replace("</decision>", f"</{tag}>")


class ScriptedRoleModel:
    """One scripted reply per role, built from the goal (the skill's name and vision)."""

    def __init__(self, goal: Goal) -> None:
        self.goal = goal
        self.calls: list[str] = []

    def complete(self, role: str, system: str, prompt: str) -> TextReply:
        self.calls.append(role)
        replies = {"orchestrator": self._plan, "builder": self._suite, "visionary": self._decision}
        if role not in replies:
            raise TextModelError(f"scripted replies: no reply for the {role}")
        return TextReply(with_answer_tags(replies[role](), prompt), Usage(), "scripted")

    def _vision(self) -> str:
        line = next((x.strip() for x in self.goal.vision.splitlines() if x.strip()), "")
        return line[:200]

    def _plan(self) -> str:
        return (
            "Scripted plan (skill-eval review --mock).\n\n## Builder tasks\n"
            f"- [B1] (vision_alignment) a request the skill is for: {self._vision()}\n"
            "- [B2] (correctness) a second request of the same kind\n\n"
            "## QA checklist\n"
            f"- [C1] (the skill's answers carry its mark) B1 and B2 answer with {MARK}\n"
        )

    def _suite(self) -> str:
        ids = ("request-1", "request-2")
        tasks = [
            {
                "id": task_id,
                "prompt": f"{self._vision() or self.goal.skill_name} (scripted request {n})",
                "judge": {"type": "contains", "expected": [MARK]},
                "x-builder-task": f"B{n}",
                "x-checks": ["C1"],
            }
            for n, task_id in enumerate(ids, start=1)
        ]
        suite = {
            "skill_id": self.goal.skill_name,
            "version": "1.0",
            "description": f"Scripted by skill-eval review --mock: {DRY_RUN}",
            "tasks": tasks,
        }
        outputs = {
            "candidate": {t: f"A scripted answer.\n{MARK}\n" for t in ids},
            "baseline": {t: "A scripted answer without the mark.\n" for t in ids},
        }
        files = {
            SUITE_FILE: yaml.safe_dump(suite, sort_keys=False, allow_unicode=True),
            MOCK_OUTPUTS_FILE: yaml.safe_dump(outputs, sort_keys=False),
        }
        blocks = [
            f"=== FILE: {path} ===\n{text.rstrip()}\n=== END FILE ==="
            for path, text in files.items()
        ]
        return (
            "=== RATIONALE ===\nScripted suite: two requests of the kind the vision "
            "describes.\n=== END RATIONALE ===\n" + "\n".join(blocks) + "\n"
        )

    def _decision(self) -> str:
        dims = {
            d: {"rating": "partial", "notes": "scripted: not judged"} for d in VISION_DIMENSIONS
        }
        body = json.dumps(
            {
                "decision": "approved_partial",
                "summary": f"Scripted decision for {self.goal.skill_name}: {DRY_RUN}.",
                "dimensions": dims,
                "refine": {"add": [], "change": [], "remove": []},
                "feedback": [],
                "caveats": [DRY_RUN],
            },
            indent=1,
        )
        return f"<decision>\n{body}\n</decision>\n"
