"""Issue 51: a summary over many tasks shows the tasks that changed and counts the rest (every
task stays in the artifact and the HTML report): a 2,000-task mock run's terminal summary
stays under 20 KB."""

from __future__ import annotations

from pathlib import Path

from skill_eval.report.html import render_html
from tests.helpers import contains_task, read_json, run_cli, write_outputs, write_skill, write_suite

TASKS = [f"task-{i:04d}-with-a-longish-name" for i in range(2000)]
REGRESSED = set(TASKS[100:130])
IMPROVED = set(TASKS[500:600])


def test_a_2000_task_summary_stays_small_and_the_artifact_keeps_every_task(
    tmp_path: Path,
) -> None:
    suite = write_suite(tmp_path / "suite", [contains_task(t, "DONE") for t in TASKS])
    outputs = {
        "candidate": {t: "no" if t in REGRESSED or i % 7 == 0 and t not in IMPROVED else "DONE"
                      for i, t in enumerate(TASKS)},
        "baseline": {t: "no" if t in IMPROVED or i % 7 == 0 and t not in REGRESSED else "DONE"
                     for i, t in enumerate(TASKS)},
    }  # fmt: skip
    code, out, err = run_cli(
        "run", "--standalone", "--task-suite", str(suite),
        "--skill-path", str(write_skill(tmp_path / "skill")), "--mock",
        "--mock-outputs", str(write_outputs(tmp_path / "outputs.yaml", outputs)),
        "--state-root", str(tmp_path / "state"),
    )  # fmt: skip
    assert out.strip(), err
    data = read_json(out.strip())
    start = err.index("\ntask ") + 1  # the summary: the task table and what follows it
    summary = err[start:]
    assert len(summary.encode()) < 20_000, len(summary.encode())
    rows = summary.split("\n\n")[0].splitlines()[1:]
    shown = [line.split()[0] for line in rows if not line.startswith("...")]
    # the regressions first, then improvements, up to 40 rows; the rest counted
    assert shown[:30] == sorted(REGRESSED) and set(shown[30:]) <= IMPROVED
    assert len(shown) == 40
    assert rows[-1].startswith("... 90 more changed; 1,870 of 2,000 tasks unchanged (")
    assert "passed in both arms" in rows[-1] and "failed in both arms" in rows[-1]
    assert "every task is in the artifact and the HTML report" in rows[-1]
    [improved] = [line for line in summary.splitlines() if line.startswith("improved ")]
    assert improved.endswith("and 88 more (all in the artifact)")
    # the artifact and the HTML keep every task
    assert len(data["candidate_results"]) == len(data["baseline_results"]) == 2000
    assert len(data["comparison"]["improved"]) == 100
    html = render_html(data)
    assert html.count('<details class="task"') == 2000
