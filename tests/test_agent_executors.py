"""The bundled demos on every agent, offline: `skill-eval run` with the real Claude Code,
OpenCode and Codex CLIs (pinned: scripts/install_agents.sh for the last two), each attempt in
its jail, against the fake model API of its protocol, every agent scripted to do the same work
in its own tools (tests/agent_scripts.py). All three reach the mock demo's verdicts; a
trigger attempt stops at the invocation; a 5xx storm is an error, never "not triggered"; the
user's own skills and context files never reach a request; `context` and `system` deliver the
skill's text. Skips name what is missing (the CLIs, bubblewrap)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skill_eval.jail.container import PROVIDER as CONTAINER
from tests.agent_runs import agent_params, needs, run_agent
from tests.agent_scripts import (
    AGENT_DESC,
    AGENT_EXPECTED,
    DEMO_AGENT,
    DEMO_TRIGGERS,
    TRIGGER_BASE_DESC,
    TRIGGER_DESC,
    TRIGGER_EXPECTED,
    agent_rules,
    trigger_rules,
)
from tests.fakes.openai_server import Fault
from tests.helpers import jail_missing, run_cli, write_suite

pytestmark = pytest.mark.slow  # real agent CLIs, up to 16 attempts a run

AGENT_ARGS = [
    "--task-suite",
    str(DEMO_AGENT),
    "--skill-path",
    str(DEMO_AGENT / "skill" / "csv-report"),
    "--skill-mode",
    "installed",
    "--max-retries",
    "0",
    "--concurrency",
    "3",
]
TRIGGER_ARGS = [
    "--task-suite",
    str(DEMO_TRIGGERS),
    "--skill-path",
    str(DEMO_TRIGGERS / "skill" / "pdf-tools"),
    "--baseline-skill",
    str(DEMO_TRIGGERS / "baseline" / "pdf-tools"),
    "--concurrency",
    "3",
]


def statuses(run: Any) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {"candidate": {}, "baseline": {}}
    for (arm, task), record in run.by_arm_task().items():
        found[arm][task] = record["status"]
    return found


@pytest.mark.skipif(jail_missing() is not None, reason=str(jail_missing()))  # pytest judges
def test_the_mock_demo_gives_the_verdicts_the_scripts_must_reach(tmp_path: Path) -> None:
    code, _, err = run_cli(
        "run",
        "--standalone",
        *AGENT_ARGS[:4],
        "--mock",
        "--mock-outputs",
        str(DEMO_AGENT / "mock_outputs.yaml"),
        "--state-root",
        str(tmp_path / "state"),
        "-q",
        "--output",
        str(tmp_path / "a.json"),
    )
    assert code == 0, err
    data = json.loads((tmp_path / "a.json").read_text())
    for arm in ("candidate", "baseline"):
        found = {t["task_id"]: t["attempts"][0]["status"] for t in data[f"{arm}_results"]}
        assert found == AGENT_EXPECTED[arm]


@pytest.mark.parametrize("agent", agent_params())
def test_the_agent_demo_reaches_the_same_verdicts_on_every_agent(
    tmp_path: Path, agent: str
) -> None:
    run = run_agent(tmp_path, agent, AGENT_ARGS, agent_rules(agent))
    assert run.code == 0, run.err
    assert statuses(run) == AGENT_EXPECTED, run.records()
    assert run.data()["evaluation"]["verdict"] == "pass"
    records = run.by_arm_task()
    # The candidate loaded the skill, read the CSV and wrote report.md with its own tools;
    # each agent's transcript reads the same (Claude Code's names).
    used = records[("candidate", "uses-the-skill")]
    names = [c["name"] for c in used["transcript"] if c["name"] != "Bash"]
    assert names == (["Skill", "Write"] if agent == "codex" else ["Skill", "Read", "Write"])
    assert used["transcript"][0]["input"] == {"skill": "csv-report"}
    write = next(c for c in used["transcript"] if c["name"] == "Write")
    assert write["input"]["file_path"] == "/workspace/report.md"
    assert used["meta"]["skill_invocations"] == 1
    assert used["meta"]["isolation"]["jail"] == "bubblewrap"
    # Only the agent's work came back: the installed skill is gone from every workspace.
    kept = run.kept("candidate", "uses-the-skill")
    files = sorted(p.relative_to(kept).as_posix() for p in kept.rglob("*") if p.is_file())
    assert files == ["inputs/q3/costs.csv", "report.md"]
    # The skill's description reached the candidate's requests only.
    bodies = [json.dumps(r.json) for r in run.requests]
    assert any(AGENT_DESC in b for b in bodies) and not all(AGENT_DESC in b for b in bodies)
    usage = run.data()["candidate_results"][0]["attempts"][0]["usage"]
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0


# The fake's delay of the answer after the invocation: an attempt that waited for it would
# last at least this long, so any shorter one (its start-up on a loaded machine included:
# 28 s seen at a load of 10) stopped at the invocation. Below the demo's 300 s task timeout.
ANSWER_LATENCY = 240


@pytest.mark.parametrize("agent", agent_params())
def test_the_trigger_demo_reaches_the_same_rates_and_stops_at_the_invocation(
    tmp_path: Path, agent: str
) -> None:
    rules = trigger_rules(agent, answer_latency=ANSWER_LATENCY)
    run = run_agent(tmp_path, agent, TRIGGER_ARGS, rules)
    assert run.code == 0, run.err
    triggers = run.data()["triggers"]["arms"]
    for arm, expected in TRIGGER_EXPECTED.items():
        got = triggers[arm]
        assert (got["tpr"]["rate"], got["fpr"]["rate"], got["errors"]) == (
            expected["tpr"],
            expected["fpr"],
            0,
        )
    assert run.data()["evaluation"]["verdict"] == "pass"
    hit = run.by_arm_task()[("candidate", "notes-to-pdf")]
    assert hit["meta"]["stopped"] == "skill invoked" and hit["output"] == ""
    assert hit["duration_ms"] < ANSWER_LATENCY * 1000
    assert hit["transcript"][0]["name"] == "Skill"
    assert hit["transcript"][0]["input"] == {"skill": "pdf-tools"}
    bodies = [json.dumps(r.json) for r in run.requests]
    assert sum(TRIGGER_DESC in b for b in bodies) >= 8
    assert sum(TRIGGER_BASE_DESC in b for b in bodies) >= 8


STORM = {"opencode": [Fault("overloaded", retry_after=0)], "codex": [Fault("overloaded")]}


@pytest.mark.parametrize(
    "agent", [pytest.param(a, marks=needs(a), id=a) for a in ("opencode", "codex")]
)
def test_a_5xx_storm_is_an_error_never_not_triggered(tmp_path: Path, agent: str) -> None:
    args = [*TRIGGER_ARGS, "--max-retries", "0"]
    if agent == "codex":
        args += ["--executor-option", "api_retries=1"]
    run = run_agent(tmp_path, agent, args, trigger_rules(agent), faults=STORM[agent])
    records = run.records()
    assert len(records) == 16
    assert {r["status"] for r in records} == {"error"}, records[0]
    assert all("HTTP 503" in r["error"] for r in records), records[0]["error"]
    assert all(r["meta"]["api_errors"] == {"503": r["meta"]["api_requests"]} for r in records)
    retries = {r["meta"]["api_requests"] for r in records}
    assert retries == ({6} if agent == "opencode" else {4})  # its own resends, then the error
    data = run.data()
    assert data["evaluation"]["verdict"] == "error"
    for arm in ("candidate", "baseline"):
        figures = data["triggers"]["arms"][arm]
        assert figures["errors"] == 8 and figures["tpr"]["rate"] is None


# Long enough for OpenCode's start-up on a loaded machine (3 s idle, 28 s seen at a load of
# 10) to reach the API: the test asserts what the attempt ended as, not how fast it got there.
OUT_OF_TIME = 60


@needs("opencode")
def test_running_out_of_time_while_the_api_fails_is_the_apis_error(tmp_path: Path) -> None:
    """OpenCode waits out a 503's `retry-after` (an hour here) before it resends: the
    attempt's time ends first; the proxy saw the API failing, so it is an error, not the
    agent's failure. Without the header it backs off 2, 4, 8 ... s and gives up after 6
    requests (about 75 s): the hour keeps the outcome the same however slow its start-up."""
    suite = write_suite(
        tmp_path / "suite",
        [
            {
                "id": "q",
                "query": "Make a PDF",
                "should_trigger": True,
                "timeout_seconds": OUT_OF_TIME,
            }
        ],
        skill_id="pdf-tools",
    )
    args = [
        "--task-suite",
        str(suite),
        *TRIGGER_ARGS[2:6],
        "--max-retries",
        "0",
    ]
    run = run_agent(tmp_path, "opencode", args, [], faults=[Fault("overloaded", retry_after=3600)])
    records = run.records()
    assert {r["status"] for r in records} == {"error"}, records
    assert all("while the API was failing" in r["error"] for r in records), [
        r["error"] for r in records
    ]
    assert all(r["meta"]["api_errors"] == {"503": 1} for r in records), records


def shadow(home: Path, description: str) -> None:
    """The user's own skills and context files, everywhere the agents look in HOME."""
    for where in (".config/opencode/skills", ".agents/skills", ".codex/skills", ".claude/skills"):
        folder = home / where / "pdf-tools"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: pdf-tools\ndescription: {description}\n---\nSHADOW body\n"
        )
    for where in (
        ".config/opencode/AGENTS.md",
        ".codex/AGENTS.md",
        "AGENTS.md",
        ".claude/CLAUDE.md",
    ):
        (home / where).parent.mkdir(parents=True, exist_ok=True)
        (home / where).write_text(f"{description} context\n")


@pytest.mark.parametrize(
    "agent", [pytest.param(a, marks=needs(a), id=a) for a in ("opencode", "codex")]
)
def test_the_users_skills_config_and_context_never_load(tmp_path: Path, agent: str) -> None:
    home = tmp_path / "home"
    shadow(home, f"{TRIGGER_DESC} SHADOW-5e1f")
    (tmp_path / "AGENTS.md").write_text("PARENT-CONTEXT-77 above the run\n")  # above cwd
    suite = write_suite(
        tmp_path / "suite",
        [
            {
                "id": "q",
                "query": "Turn my meeting notes into a PDF I can send around.",
                "should_trigger": True,
            }
        ],
        skill_id="pdf-tools",
    )
    args = ["--task-suite", str(suite), *TRIGGER_ARGS[2:6], "--max-retries", "0"]
    run = run_agent(tmp_path, agent, args, trigger_rules(agent), home=home)
    assert run.code in (0, 4), run.err  # (one query: not enough evidence for a verdict)
    assert run.requests
    for request in run.requests:
        text = json.dumps(request.json)
        assert "SHADOW-5e1f" not in text and "PARENT-CONTEXT-77" not in text
    assert (home / ".agents" / "skills" / "pdf-tools" / "SKILL.md").is_file()


@pytest.mark.parametrize(
    "agent", [pytest.param(a, marks=needs(a), id=a) for a in ("opencode", "codex")]
)
@pytest.mark.parametrize("mode", ["context", "system"])
def test_context_and_system_modes_deliver_the_skills_text(
    tmp_path: Path, agent: str, mode: str
) -> None:
    skill = tmp_path / "skill" / "notes"
    (skill / "reference").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: notes\ndescription: NOTES-DESC-1\n---\nNOTES-BODY-2 end with OLIVE.\n"
    )
    (skill / "reference" / "style.md").write_text("STYLE-3\n")
    suite = write_suite(
        tmp_path / "suite",
        [
            {
                "id": "t",
                "prompt": "Summarise my notes.",
                "judge": {"type": "contains", "expected": ["OLIVE"]},
            }
        ],
        skill_id="notes",
    )
    rules = [{"name": "with", "request_contains": "NOTES-BODY-2", "text": "Done. OLIVE"}]
    args = ["--task-suite", str(suite), "--skill-path", str(skill), "--skill-mode", mode]
    run = run_agent(tmp_path, agent, [*args, "--max-retries", "0"], rules, default="Done.")
    assert run.code in (0, 4), run.err  # (one task: not enough evidence for a verdict)
    records = run.by_arm_task()
    assert records[("candidate", "t")]["status"] == "passed"
    assert records[("baseline", "t")]["status"] == "failed"
    candidate = next(json.dumps(r.json) for r in run.requests if r.rule == "with")
    if mode == "context":  # AGENTS.md, and where the folder's other files are
        assert ".skill-eval/notes/reference/style.md" in candidate
    kept = run.kept("candidate", "t")
    assert not (kept / "AGENTS.md").exists() and not (kept / ".skill-eval").exists()


@needs("codex")
def test_codex_trigger_query_naming_the_skill_is_refused(tmp_path: Path) -> None:
    """`$name` in a prompt makes Codex load the skill itself: the model never decides."""
    suite = write_suite(
        tmp_path / "suite",
        [{"id": "q", "query": "Use $pdf-tools on my notes.", "should_trigger": True}],
        skill_id="pdf-tools",
    )
    args = ["--task-suite", str(suite), *TRIGGER_ARGS[2:6], "--max-retries", "0"]
    run = run_agent(tmp_path, "codex", args, trigger_rules("codex"))
    assert run.code != 0
    assert "trigger task 'q': its query names $pdf-tools" in run.err, run.err
    assert run.requests == []  # refused before Codex ran


@needs("codex")
def test_codex_task_prompt_naming_the_skill_is_recorded(tmp_path: Path) -> None:
    suite = write_suite(
        tmp_path / "suite",
        [
            {
                "id": "t",
                "prompt": "Summarise my notes with $pdf-tools.",
                "judge": {"type": "contains", "expected": ["OLIVE"]},
            }
        ],
        skill_id="pdf-tools",
    )
    args = ["--task-suite", str(suite), *TRIGGER_ARGS[2:4], "--max-retries", "0"]  # no baseline
    run = run_agent(tmp_path, "codex", args, [], default="Done. OLIVE")
    named = run.by_arm_task()[("candidate", "t")]
    assert named["status"] == "passed"
    assert "$pdf-tools" in named["meta"]["skill_loaded_by_prompt"]
    assert "skill_loaded_by_prompt" not in run.by_arm_task()[("baseline", "t")]["meta"]
    # Codex put the skill's body into the candidate's request itself (the model ran nothing).
    body = "never hand-write PDF syntax"
    assert [body in json.dumps(r.json) for r in run.requests].count(True) == 1


@pytest.mark.skipif(CONTAINER.problem() is not None, reason=str(CONTAINER.problem()))
@pytest.mark.parametrize("agent", [a for a in agent_params() if a.id == "claude"])
def test_the_demos_reach_the_same_verdicts_in_the_container_provider(
    tmp_path: Path, agent: str
) -> None:
    """#40: `--jail container` (Podman here) gives the bubblewrap verdicts, jailed."""
    jail = ["--jail", "container"]
    run = run_agent(tmp_path / "agent", agent, [*AGENT_ARGS, *jail], agent_rules(agent))
    assert run.code == 0, run.err
    assert statuses(run) == AGENT_EXPECTED, run.records()
    used = run.by_arm_task()[("candidate", "uses-the-skill")]
    assert used["meta"]["isolation"]["jail"] == "container"
    assert run.data()["manifest"]["isolation"] == {"jail": "container", "isolated": True}
    rules = trigger_rules(agent, answer_latency=ANSWER_LATENCY)
    run = run_agent(tmp_path / "trigger", agent, [*TRIGGER_ARGS, *jail], rules)
    assert run.code == 0, run.err
    for arm, expected in TRIGGER_EXPECTED.items():
        got = run.data()["triggers"]["arms"][arm]
        assert (got["tpr"]["rate"], got["fpr"]["rate"], got["errors"]) == (
            expected["tpr"],
            expected["fpr"],
            0,
        )
