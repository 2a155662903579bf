"""`improve` and `review` run their evaluations with `run`'s own flags (#52): --concurrency,
--max-retries, --jail and the cost caps are in their help as in run's, and each reaches the
executor. The anthropic executor runs against the loopback fake Messages API, so what
reached it is seen in the requests the server got: how many ran at once, how often a failing
request was tried, and when the spending stopped; the jail through a provider that logs its
launches and the run's manifest."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.faults import Fault
from tests.fakes.handler import RecordedRequest
from tests.helpers import read_json, run_cli, write_skill, write_suite
from tests.review_script import VISION, review_skill

MODEL = "claude-sonnet-4-6"  # a priced model: the caps have dollars to count
SHARED = ("--jail", "--concurrency", "--max-retries", "--max-cost-usd", "--max-tokens-total")


def _help_lines(command: str) -> dict[str, str]:
    """Each option's first help line, by flag, as `command --help` prints it."""
    _code, out, _err = run_cli(command, "--help")
    found = {}
    for line in out.splitlines():
        words = line.split()
        if words and words[0].startswith("--"):
            found[words[0]] = " ".join(words[1:])
    return found


@pytest.mark.parametrize("command", ["improve", "review"])
def test_help_lists_runs_own_execution_flags_and_caps(command: str) -> None:
    run, other = _help_lines("run"), _help_lines(command)
    for flag in SHARED:
        assert flag in other, f"{command} --help has no {flag}"
        assert other[flag] == run[flag], flag  # the same flag, said the same way


def _improve(tmp_path: Path, server: FakeAnthropic, *flags: str) -> tuple[int, str, str]:
    skill = write_skill(tmp_path / "skill", "Answer in one line.")
    tasks = [
        {
            "id": f"t{i}",
            "prompt": f"Question {i}?",
            "judge": {"type": "contains", "expected": ["ok"]},
        }
        for i in range(12)
    ]
    suite = write_suite(tmp_path / "suite", tasks)
    return run_cli(
        "improve",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "state"),
        "--executor",
        "anthropic",
        "--model",
        MODEL,
        "--executor-option",
        f"base_url={server.base_url}",
        "--improver",
        "mock",
        "--iterate",
        "1",
        "--holdout",
        "0",
        *flags,
    )


def _review(tmp_path: Path, server: FakeAnthropic, *flags: str) -> tuple[int, str, str]:
    """The role models are the built-in scripted ones; the QA runs go to the fake API."""
    skill = review_skill(tmp_path)
    vision = tmp_path / "vision.md"
    vision.write_text(VISION + "\n", encoding="utf-8")
    return run_cli(
        "review",
        str(skill),
        "--vision",
        str(vision),
        "--state-root",
        str(tmp_path / "state"),
        "--executor",
        "mock",
        "--qa-executor",
        "anthropic",
        "--model",
        MODEL,
        "--executor-option",
        f"base_url={server.base_url}",
        "--max-rounds",
        "1",
        *flags,
    )


Command = Callable[..., tuple[int, str, str]]
COMMANDS = [pytest.param(_improve, id="improve"), pytest.param(_review, id="review")]


def _asked(server: FakeAnthropic) -> list[RecordedRequest]:
    return server.requests_to("/v1/messages")


def _most_at_once(requests: Sequence[RecordedRequest]) -> int:
    """The most requests the server was answering at one moment."""
    edges = sorted(
        [(r.time, 1) for r in requests] + [(r.replied_at or r.time, -1) for r in requests],
        key=lambda edge: (edge[0], edge[1]),  # a reply before a request at the same instant
    )
    running = most = 0
    for _, step in edges:
        running += step
        most = max(most, running)
    return most


@pytest.mark.parametrize("command", COMMANDS)
def test_concurrency_reaches_the_executor(
    command: Command, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with FakeAnthropic(default="ok", latency=0.3) as server:
        code, _out, err = command(tmp_path / "one", server, "--concurrency", "1")
        one = _asked(server)
        server.reset()
        code3, _out, err3 = command(tmp_path / "three", server, "--concurrency", "3")
        three = _asked(server)
    assert code in (0, 1) and code3 in (0, 1), err + err3
    assert len(one) >= 4 and _most_at_once(one) == 1
    assert 1 < _most_at_once(three) <= 3  # 0.3 s a reply: several overlap, never a fourth


@pytest.mark.parametrize("command", COMMANDS)
def test_max_retries_reaches_the_executor(
    command: Command, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every request is overloaded (529, retry at once): each attempt is tried
    1 + --max-retries times, then counts as an error."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    sent = {}
    with FakeAnthropic(default="ok", faults=[Fault("overloaded", retry_after=0)]) as server:
        for retries in (0, 2):
            server.reset()
            command(tmp_path / str(retries), server, "--max-retries", str(retries))
            sent[retries] = len(_asked(server))
    assert sent[0] >= 4 and sent[2] == 3 * sent[0], sent


@pytest.mark.parametrize("command", COMMANDS)
def test_the_cost_cap_covers_the_whole_command(
    command: Command, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cap a few replies' worth stops the spending long before the work is done: no new
    request once it is reached (those already running finish)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with FakeAnthropic(default="ok " * 400) as server:
        code, _out, err = command(tmp_path / "free", server, "--concurrency", "1")
        uncapped = len(_asked(server))
        server.reset()
        capped_code, _out, capped_err = command(
            tmp_path / "capped", server, "--concurrency", "1", "--max-tokens-total", "1000"
        )
        capped = len(_asked(server))
    assert code in (0, 1), err
    assert uncapped >= 6 and capped < uncapped / 2, (uncapped, capped, capped_err)
    assert capped_code == 5, capped_err  # the budget's code: never a pass


def test_the_jail_reaches_reviews_qa_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with FakeAnthropic(default="ok") as server:
        code, _out, err = _review(tmp_path, server, "--no-jail")
    assert code in (0, 1), err
    assert err.splitlines()[0].startswith("WARNING: ")  # said first, as run says it
    runs = list((tmp_path / "state" / "evaluations").glob("*.json"))
    assert runs
    for path in runs:
        assert read_json(path)["manifest"]["isolation"]["jail"] == "none"


def test_the_jail_reaches_improves_judgements(tmp_path: Path, logged_provider: Path) -> None:
    """A `pytest` judge's code runs in the provider --jail names: one launch a judgement."""
    from tests.test_judges_e2e import TEST_REPORT

    suite_dir = tmp_path / "suite"
    (suite_dir / "fixtures").mkdir(parents=True)
    (suite_dir / "fixtures" / "test_report.py").write_text(TEST_REPORT, encoding="utf-8")
    judge = {"type": "pytest", "test_file": "fixtures/test_report.py"}
    tasks = [{"id": f"r{i}", "prompt": f"Report {i}", "judge": judge} for i in range(2)]
    suite = write_suite(suite_dir, tasks)
    outputs = tmp_path / "outputs.yaml"
    outputs.write_text('{r0: \'{"status": "ok"}\', r1: "no"}\n', encoding="utf-8")
    skill = write_skill(tmp_path / "skill")
    code, _out, err = run_cli(
        "improve",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "--mock-outputs",
        str(outputs),
        "--iterate",
        "1",
        "--holdout",
        "0",
        "--jail",
        "logged",
    )
    assert code in (0, 1), err
    assert "train 0.50" in err  # r0 passed its judge, r1 failed it: both were judged
    assert len(logged_provider.read_text().splitlines()) == 2  # both in the named jail
