"""Issue 17, "reports and limits": reports validate before they render, model output cannot
reorder or @-mention in them, and the run's own limits refuse only what is unreasonable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skill_eval.inputs.suite import load_suite
from tests.helpers import (
    DEMO_RANKING,
    DEMO_SUITE,
    read_json,
    run_cli,
    write_outputs,
    write_skill,
    write_suite,
)

RLO = "\u202e"
HOSTILE = f"alpha {RLO}gnp.exe @team ping @org/admins \u2066x\u2069"


def _artifact(tmp_path: Path) -> Path:
    _, out, _ = run_cli(
        "run",
        "--input",
        str(DEMO_RANKING),
        "--candidate-id",
        "cand-sections",
        "--task-suite",
        str(DEMO_SUITE),
        "--state-root",
        str(tmp_path / "s"),
        "--mock",
        "-q",
    )
    return Path(out.strip())


@pytest.mark.parametrize(
    ("where", "value", "field"),
    [
        (("usage", "candidate", "cost_usd"), "lots", "usage.candidate.cost_usd"),
        (("comparison", "interval"), [-(10**400), 1], "comparison.interval[0]"),
    ],
)
@pytest.mark.parametrize("fmt", ["table", "markdown", "junit"])
def test_report_refuses_an_invalid_artifact_naming_the_field(
    tmp_path: Path, where: tuple[str, ...], value: object, field: str, fmt: str
) -> None:
    path = _artifact(tmp_path)
    data = read_json(path)
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    code, out, err = run_cli("report", str(bad), "--format", fmt)
    assert code == 2 and out == ""
    assert f"bad.json: {field}: " in err and "Traceback" not in err
    assert len(err) < 400  # a 400-digit number is clipped, not echoed


def test_bidi_controls_and_mentions_never_reach_a_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a judge that quotes the output in its feedback, as many do
    (tmp_path / "mod").mkdir()
    (tmp_path / "mod" / "echo_judge_17.py").write_text(
        "def judge(output, task):\n"
        "    return {'passed': False, 'score': 0.0, 'details': 'said: ' + output}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "mod"))
    suite = write_suite(
        tmp_path / "suite",
        [
            {
                "id": "t1",
                "prompt": "p",
                "judge": {"type": "python", "callable": "echo_judge_17:judge"},
            }
        ],
    )
    outputs = write_outputs(tmp_path / "out.yaml", {"t1": HOSTILE})
    skill = write_skill(tmp_path / "skill")
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--skill-path",
        str(skill),
        "--no-baseline",
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "s"),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "-q",
    )
    artifact = out.strip()
    assert RLO in Path(artifact).read_text(encoding="utf-8")  # the record keeps the truth
    assert RLO not in err  # the end-of-run summary
    for fmt in ("table", "markdown", "junit"):
        _, text, _ = run_cli("report", artifact, "--format", fmt)
        assert "gnp.exe" in text, fmt
        assert not any(c in text for c in (RLO, "\u2066", "\u2069")), fmt
    _, markdown, _ = run_cli("report", artifact, "--format", "markdown")
    assert "@team" not in markdown and "@org" not in markdown
    assert "&#64;team" in markdown


def test_samples_are_bounded(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "skill")
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(DEMO_SUITE),
        "--state-root",
        str(tmp_path / "s"),
        "--mock",
        "--samples",
        "100000000",
    )
    assert code == 2 and out == ""
    assert err.strip() == "Error: --samples must be at most 1000, got 100000000"


def test_a_large_plain_suite_is_not_an_alias_bomb(tmp_path: Path) -> None:
    tasks = [
        {
            "id": f"task-{i:05d}",
            "prompt": f"Say {i}",
            "judge": {"type": "contains", "expected": [f"v{i}", "ok"]},
        }
        for i in range(8300)
    ]
    path = tmp_path / "task_suite.yaml"
    path.write_text(yaml.safe_dump({"skill_id": "big", "version": "1.0", "tasks": tasks}))
    assert path.stat().st_size < 1024 * 1024
    assert len(load_suite(path).tasks) == 8300
