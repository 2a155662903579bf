"""A whole `skill-eval run --executor anthropic` with a folder skill against the local Messages
API: the read_skill_file calls land in the journal and the artifact, the run warns once about
the files the tool refuses, and the reports' cost line counts prompt-cache tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import (
    contains_task,
    journal_records,
    read_json,
    run_cli,
    write_skill,
    write_suite,
)

GUIDE = "GUIDE-7c2e: the answer is alpha"
RULES = [
    {
        "name": "reader",
        "request_contains": "read references/guide.md",
        "steps": [
            {
                "text": "Let me read the guide.",
                "tool_use": {"name": "read_skill_file", "input": {"path": "references/guide.md"}},
            },
            {"text": "alpha, as the guide says"},
        ],
    }
]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    with FakeAnthropic(rules=RULES, default="nothing useful") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        yield fake


def run(tmp_path: Path) -> tuple[dict, Path]:
    suite = write_suite(
        tmp_path / "suite", [contains_task("t0", "alpha"), contains_task("t1", "alpha")]
    )
    skill = write_skill(tmp_path / "guided", "Before answering, read references/guide.md.")
    (skill / "references").mkdir()
    (skill / "references" / "guide.md").write_text(GUIDE, encoding="utf-8")
    (skill / "logo.png").write_bytes(b"\x89PNG\0\0")
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--task-suite",
        str(suite),
        "--skill-path",
        str(skill),
        "--state-root",
        str(tmp_path / "st"),
        "--executor",
        "anthropic",
        "--model",
        "claude-sonnet-4-6",
        "-q",
        "--policy",
        "delta",
    )
    assert code == 0, err
    path = Path(out.strip())
    return read_json(path), path


def test_the_transcript_lands_in_the_journal_and_the_artifact(
    tmp_path: Path, server: FakeAnthropic
) -> None:
    data, _ = run(tmp_path)
    assert data["evaluation"]["execution_pass_rate"] == 1.0
    assert data["evaluation"]["baseline_pass_rate"] == 0.0
    expected = [
        {
            "name": "read_skill_file",
            "input": {"path": "references/guide.md"},
            "ok": True,
            "output": GUIDE,
        }
    ]
    cand = [a for r in data["candidate_results"] for a in r["attempts"]]
    assert [a["transcript"] for a in cand] == [expected, expected]
    assert all("transcript" not in a for r in data["baseline_results"] for a in r["attempts"])
    [journal] = (tmp_path / "st").glob("runs/*/attempts.jsonl")
    lines = journal_records(journal)
    assert (
        sorted(json.dumps(e.get("transcript")) for e in lines if e["arm"] == "candidate")
        == [json.dumps(expected)] * 2
    )
    # one request to read, one to answer, per candidate attempt; one per baseline attempt
    assert server.count == 2 * 2 + 2
    assert all("tools" not in r.json for r in server.requests if "guide.md" not in r.text)
    warnings = [w for w in data["warnings"] if "read_skill_file refuses" in w]
    assert len(warnings) == 1 and "logo.png (a binary file)" in warnings[0]


def test_the_cost_line_counts_prompt_cache_tokens(tmp_path: Path, server: FakeAnthropic) -> None:
    data, path = run(tmp_path)
    usage = data["usage"]["candidate"]
    assert usage["cache_creation_input_tokens"] > 0 and usage["cache_read_input_tokens"] > 0
    code, table, _ = run_cli("report", str(path))
    assert code == 0
    [line] = [ln for ln in table.splitlines() if ln.split()[:1] == ["cost"] and "vs lift" not in ln]
    assert (
        f"{usage['input_tokens']:,} in + {usage['cache_creation_input_tokens']:,} cache "
        f"write + {usage['cache_read_input_tokens']:,} cache read / "
        f"{usage['output_tokens']:,} out tokens"
    ) in line
    code, markdown, _ = run_cli("report", str(path), "--format", "markdown")
    assert code == 0 and "| Tokens (in + cache write + cache read / out) |" in markdown
    assert f"{usage['cache_read_input_tokens']:,} cache read" in markdown
