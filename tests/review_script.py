"""Scripted role replies for the `skill-eval review` tests: plans, suites and decisions as a
real model would write them, so the pipeline is driven through its real parsers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from tests.helpers import write_skill

SKILL_BODY = (
    "Every answer ends with the line `Verified: yes`.\n\n"
    "## Tone\n\nSKILL-BODY-MARKER: plain sentences."
)
VISION = "Answers a reader can trust: each one says whether it was verified."
DIMS = ("vision_alignment", "completeness", "quality_bar", "regression", "evaluation_quality")


def review_skill(tmp_path: Path) -> Path:
    skill = write_skill(tmp_path / "verify-skill", SKILL_BODY)
    (skill / "reference.md").write_text("Extra reference for the skill.\n", encoding="utf-8")
    return skill


def plan(feedback_ids: Sequence[str] = (), marker: str = "") -> str:
    lines = [
        "Here is the plan.",
        "",
        "## Builder tasks",
        f"- [B1] (correctness) ask a factual question; check the verified line {marker}",
        "- [B2] (vision alignment) ask for a summary; check the verified line",
        "",
        "## QA checklist",
        "- [C1] (answers say they were verified) B1 and B2 end with Verified: yes",
    ]
    if feedback_ids:
        lines += ["", "## Feedback addressed"]
        lines += [
            f"- [{fid}] tasks now compare against the no-skill answer" for fid in feedback_ids
        ]
    return "\n".join(lines) + "\n"


def suite_files(
    discriminating: bool,
    *,
    invalid: bool = False,
    pytest_task: bool = False,
    rationale: str = "covers B1 and B2",
) -> dict[str, str]:
    """A draft suite whose mock outputs make the skill matter (discriminating) or not."""
    tasks: list[dict[str, Any]] = [
        {
            "id": "fact",
            "prompt": "When was the Eiffel tower built?",
            "judge": {"type": "contains", "expected": ["Verified: yes"]},
            "x-builder-task": "B1",
            "x-checks": ["C1"],
        },
        {
            "id": "summary",
            "prompt": "Summarise the water cycle.",
            "judge": {"type": "contains", "expected": ["Verified: yes"]},
            "x-builder-task": "B2",
            "x-checks": ["C1"],
        },
    ]
    files: dict[str, str] = {}
    if pytest_task:
        tasks.append(
            {
                "id": "checked",
                "prompt": "Explain tides.",
                "judge": {"type": "pytest", "test_file": "fixtures/test_verified.py"},
                "x-builder-task": "B2",
                "x-checks": ["C1"],
            }
        )
        files["fixtures/test_verified.py"] = (
            "import os\n\n\ndef test_verified_line():\n"
            "    text = open(os.environ['AI_OUTPUT_FILE'], encoding='utf-8').read()\n"
            "    assert text.rstrip().endswith('Verified: yes')\n"
        )
    suite: dict[str, Any] = {"skill_id": "verify-skill", "version": "1.0", "tasks": tasks}
    if invalid:
        suite.pop("version")
        tasks[0]["judge"] = {"type": "contans", "expected": ["x"]}
    good = {t["id"]: f"Answer about {t['id']}.\nVerified: yes\n" for t in tasks}
    bad = {t["id"]: f"Answer about {t['id']}.\n" for t in tasks}
    files["task_suite.yaml"] = yaml.safe_dump(suite, sort_keys=False)
    files["mock_outputs.yaml"] = yaml.safe_dump(
        {"candidate": good, "baseline": bad if discriminating else good}
    )
    return {"__rationale__": rationale, **files}


def builder_reply(files: dict[str, str]) -> str:
    parts = [
        "Sure, here is the suite.",
        "=== RATIONALE ===",
        files.get("__rationale__", ""),
        "=== END RATIONALE ===",
    ]
    for path, text in files.items():
        if path != "__rationale__":
            parts += [f"=== FILE: {path} ===", text.rstrip("\n"), "=== END FILE ==="]
    return "\n".join(parts) + "\n"


def decision(
    name: str,
    *,
    add: Sequence[str] = (),
    feedback: Sequence[str] = (),
    rating: str = "pass",
    tag: str = "decision",
) -> str:
    """A visionary reply: the decision between `<tag>` tags (`decision`: the mock role model's
    placeholder for this call's nonce; `{decision_tag}`: the fake server's)."""
    body = {
        "decision": name,
        "summary": f"the skill is {name}",
        "dimensions": {d: {"rating": rating, "notes": f"{d} notes"} for d in DIMS},
        "refine": {"add": list(add), "change": [], "remove": []},
        "feedback": list(feedback),
        "caveats": [],
    }
    return f"My judgement:\n<{tag}>\n```json\n" + json.dumps(body, indent=1) + f"\n```\n</{tag}>\n"


REFINE = decision(
    "refine_evaluation",
    rating="partial",
    add=["tasks the no-skill baseline fails", "a pytest check of the last line"],
)


def write_replies(path: Path, replies: dict[str, list[str]]) -> Path:
    path.write_text(yaml.safe_dump(replies, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path
