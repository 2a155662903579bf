"""The bundled demos (task_suites/demo-agent, demo-triggers) scripted for the fake model APIs,
once, and spoken in each agent's own tools: Claude Code (`Skill`, `Read`, `Write` on the
Messages fake), OpenCode (`skill`, `read`, `write` on Chat Completions) and Codex (a shell
`cat` of SKILL.md or a file, `apply_patch`, on Responses). The same script gives each agent
the same work, so the three must reach the same verdicts (the mock demo's: its
mock_outputs.yaml is what these scripts do).

An arm is told apart by what its requests hold: the candidate's skill description when the
skill is installed (demo-agent's baseline has no skill), the baseline's description in the
trigger demo.
"""

from __future__ import annotations

from typing import Any

from tests.helpers import REPO

DEMO_AGENT = REPO / "task_suites" / "demo-agent"
DEMO_TRIGGERS = REPO / "task_suites" / "demo-triggers"
AGENT_DESC = "Turn a CSV file into a Markdown report (report.md)"
TRIGGER_DESC = "Create, merge, split and fill PDF files."
TRIGGER_BASE_DESC = "Document helpers."
# A model Codex has metadata for, so it offers apply_patch (an unknown model gets a shell only).
CODEX_MODEL = "gpt-5.5"

SALES = (
    "# Report: sales.csv\n\nRows: 3\n\n## Totals\n\n| column | total |\n|---|---|\n"
    "| units | 20.00 |\n| revenue | 500.00 |\n"
)
EMPTY = "# Report: empty.csv\n\nRows: 0\n\nNo data.\n"
COSTS = (
    "# Report: costs.csv\n\nRows: 2\n\n## Totals\n\n| column | total |\n|---|---|\n"
    "| cost | 1510.25 |\n"
)
Step = tuple[str, ...]  # ("skill", name) | ("read", path) | ("write", path, text) | ("text", t)


def _candidate(read: str | None, report: str) -> list[Step]:
    steps: list[Step] = [("skill", "csv-report")]
    if read:
        steps.append(("read", read))
    return [*steps, ("write", "report.md", report), ("text", "Wrote report.md")]


# What each arm does on each task of demo-agent (its prompt tells the task apart).
AGENT_SCRIPTS: dict[str, dict[str, list[Step]]] = {
    "Write a Markdown report of inputs/sales.csv.": {
        "candidate": _candidate("inputs/sales.csv", SALES),
        "baseline": [
            ("read", "inputs/sales.csv"),
            ("write", "summary.md", "Sales: 3 regions, 20 units, 500 revenue.\n"),
            ("text", "Here is a summary of the sales."),
        ],
    },
    "Summarise inputs/sales.csv as a Markdown report.": {
        "candidate": _candidate("inputs/sales.csv", SALES),
        "baseline": [
            (
                "write",
                "report.md",
                "# Report: sales.csv\n\nRows: 4\n\n| column | total |\n|---|---|\n| units | 20 |\n"
                "| revenue | 250.5 |\n",
            ),
            ("text", "Done."),
        ],
    },
    "Report on inputs/empty.csv in Markdown.": {
        "candidate": _candidate(None, EMPTY),
        "baseline": [
            (
                "write",
                "report.md",
                "# Report: empty.csv\n\nRows: 0\n\n| column | total |\n|---|---|\n",
            ),
            ("text", "Done."),
        ],
    },
    "Make a report of the costs in inputs/q3/costs.csv.": {
        "candidate": _candidate("inputs/q3/costs.csv", COSTS),
        "baseline": [
            ("read", "inputs/q3/costs.csv"),
            ("write", "report.md", "# Costs\n\nTotal: 1510.25\n"),
            ("text", "Wrote report.md"),
        ],
    },
    "Report on inputs/sales.csv; keep the data as it is.": {
        "candidate": _candidate("inputs/sales.csv", SALES),
        "baseline": [
            ("read", "inputs/sales.csv"),
            ("write", "report.md", SALES),
            ("text", "Wrote report.md"),
        ],
    },
}
# The mock demo's statuses (mock_outputs.yaml), task by task, and its verdict.
AGENT_EXPECTED = {
    "candidate": {t: "passed" for t in ("sales-report", "sales-report-tested", "empty-csv")}
    | {"uses-the-skill": "passed", "input-untouched": "passed"},
    "baseline": {
        "sales-report": "failed",
        "sales-report-tested": "failed",
        "empty-csv": "failed",
        "uses-the-skill": "failed",
        "input-untouched": "passed",
    },
}

# demo-triggers: the queries each description loads the skill for (mock_outputs.yaml).
TRIGGER_QUERIES = {
    "candidate": [
        "Turn my meeting notes into a PDF I can send around.",
        "Combine invoice-1.pdf and invoice-2.pdf into one file.",
        "Split this 40-page PDF into one file per chapter.",
        "Fill in the tax form PDF with the values from values.csv.",
    ],
    "baseline": [
        "Turn my meeting notes into a PDF I can send around.",
        "Combine invoice-1.pdf and invoice-2.pdf into one file.",
        "Who invented the PDF format, and when?",
    ],
}
TRIGGER_EXPECTED = {
    "candidate": {"tpr": 1.0, "fpr": 0.0},
    "baseline": {"tpr": 0.5, "fpr": 0.25},
}


def tool_step(agent: str, step: Step, skill_root: str) -> dict[str, Any]:
    """One scripted model turn, in `agent`'s tools; paths under the stated working directory."""
    kind = step[0]
    if kind == "text":
        return {"text": step[1]}
    if agent == "claude":
        if kind == "skill":
            return _use("Skill", skill=step[1])
        if kind == "read":
            return _use("Read", file_path=f"{{cwd}}/{step[1]}")
        return _use("Write", file_path=f"{{cwd}}/{step[1]}", content=step[2])
    if agent == "opencode":
        if kind == "skill":
            return _use("skill", name=step[1])
        if kind == "read":
            return _use("read", filePath=f"{{cwd}}/{step[1]}")
        return _use("write", filePath=f"{{cwd}}/{step[1]}", content=step[2])
    if kind == "skill":
        return _use("exec_command", cmd=f"cat {{cwd}}/{skill_root}/{step[1]}/SKILL.md")
    if kind == "read":
        return _use("exec_command", cmd=f"cat {{cwd}}/{step[1]}")
    lines = "".join(f"+{line}\n" for line in step[2].splitlines())
    patch = f"*** Begin Patch\n*** Add File: {step[1]}\n{lines}*** End Patch\n"
    return _use("apply_patch", input=patch)


def _use(tool: str, **tool_input: Any) -> dict[str, Any]:
    return {"tool_use": {"name": tool, "input": tool_input}}


SKILL_ROOTS = {
    "claude": ".claude/skills",
    "opencode": ".opencode/skills",
    "codex": ".agents/skills",
}


def agent_rules(agent: str) -> list[dict[str, Any]]:
    """demo-agent's script as the fake's rules, for `agent` (claude, opencode, codex)."""
    rules = []
    for prompt, arms in AGENT_SCRIPTS.items():
        for arm, steps in arms.items():
            seen = "request_contains" if arm == "candidate" else "request_not_contains"
            rules.append(
                {
                    "name": f"{arm}:{prompt[:24]}",
                    "messages_contain": prompt,
                    seen: AGENT_DESC,
                    "steps": [tool_step(agent, s, SKILL_ROOTS[agent]) for s in steps],
                }
            )
    return rules


def trigger_rules(agent: str, *, answer_latency: float = 0.0) -> list[dict[str, Any]]:
    """demo-triggers' script: each description loads the skill for its queries (then a slow
    answer the attempt must not wait for); everything else gets a plain answer (default)."""
    rules = []
    for arm, description in (("candidate", TRIGGER_DESC), ("baseline", TRIGGER_BASE_DESC)):
        for index, query in enumerate(TRIGGER_QUERIES[arm]):
            load = tool_step(agent, ("skill", "pdf-tools"), SKILL_ROOTS[agent])
            rules.append(
                {
                    "name": f"load-{arm}-{index}",
                    "request_contains": [description, query],
                    "steps": [load, {"text": "Here it is.", "latency": answer_latency}],
                }
            )
    return rules
