"""Issue 51: as a baseline cache fills from one earlier run to ten, the same unchanged skill,
run through the CLI against the fake Messages API, gets verdicts that never change without
the summary saying why: until the cache holds a full pool nothing is drawn and the run is
decided as without a cache; from then on the run makes only its fresh baseline attempts, and
every summary states the bound they gave and the one the cache would have given."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import contains_task, read_json, run_cli, write_skill, write_suite

MARK = "SKILL-MARK-c51"
TASKS = [f"t{i}" for i in range(10)]


def test_an_unchanged_skills_verdict_moves_only_with_the_bound_stated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = write_suite(tmp_path / "suite", [contains_task(t, "alpha") for t in TASKS])
    skill = write_skill(tmp_path / "skill", f"Say alpha. {MARK}")
    args = [
        "run", "--standalone", "--task-suite", str(suite), "--skill-path", str(skill),
        "--executor", "anthropic", "--model", "test-model", "--samples", "3",
        "--baseline-cache-dir", str(tmp_path / "cache"),
    ]  # fmt: skip
    verdicts: list[str] = []
    # both arms answer alike: the skill changes nothing
    with FakeAnthropic(rules=[], default="alpha") as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        for run in range(11):  # the cache holds 0, 1, ..., 10 earlier runs
            code, out, err = run_cli(*args, "--state-root", str(tmp_path / f"state{run}"))
            data = read_json(out.strip())
            verdicts.append(data["evaluation"]["verdict"])
            bound = data["baseline_pool"]["verdict_bound"]
            note = next(line for line in err.splitlines() if line.startswith("cache"))
            if run < 4:  # short of a full pool (4 runs of 3): nothing drawn, no bound moved
                assert bound is None and data["baseline_cache"].get("attempts_from_cache", 0) == 0
                held = f"the cache holds {run} earlier run" if run else "cache miss"
                assert held in note
                continue
            fresh = sum(r["stats"]["n"] for r in data["baseline_results"])
            assert bound["own_attempts"] == fresh < bound["full_attempts"] == 30
            # the summary states what decided, and what the cache would have said
            assert f"this run made {fresh} of its 30 baseline attempts" in note
            assert f"the verdict's lower bound {bound['bound'] * 100:+.1f} points" in note
            assert f"it would read {bound['pooled_bound'] * 100:+.1f}" in note
            if verdicts[-1] != verdicts[-2]:
                assert verdicts[-2] == "pass" and run == 4, verdicts  # only where the cut began
    # without a cache (and until it is full) the even result rules out 10 points; beside a
    # full cache, on 12 fresh attempts of 30, it cannot: the summary said why each time
    assert verdicts[:4] == ["pass"] * 4
    assert len(set(verdicts[4:])) == 1
