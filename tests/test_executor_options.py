"""An executor's own options: an executor from a plugin (a real entry point) is configured
from the command line (`--executor-option KEY=VALUE`) and from the project config file
(`[tool.skill-eval.executor.NAME]`), and sees the values; unknown keys, bad values and
shorthand flags the executor does not have are one-line errors; `--backend` still works as
the deprecated name of `--runner`; `run --help` is in sections."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from skill_eval.executors import base
from tests.helpers import read_json, run_cli, write_skill, write_suite
from tests.test_model_seam import install_plugin

TAGGER_PLUGIN = """
from dataclasses import dataclass
from skill_eval.executors.base import ExecutorBase, ExecutorConfig, ExecutorSpec, config_schema
from skill_eval.core.model import ExecutionResult

@dataclass(frozen=True)
class TaggerConfig(ExecutorConfig):
    tag: str = "untagged"
    repeat: int = 1
    words: tuple[str, ...] = ()

class Tagger(ExecutorBase):
    name = "tagger"
    def __init__(self, config):
        self.config = config
    def run(self, request):
        c = self.config
        return ExecutionResult(output=f"TAG={c.tag} REPEAT={c.repeat} WORDS={','.join(c.words)}")
    def describe(self):
        return {"kind": "tagger", "model": self.config.model, "tag": self.config.tag}

SPEC = ExecutorSpec(
    name="tagger",
    config_cls=TaggerConfig,
    schema=config_schema(
        TaggerConfig,
        {
            "tag": {"type": "string", "minLength": 1},
            "repeat": {"type": "integer", "minimum": 1},
            "words": {"type": "array", "items": {"type": "string"}},
        },
    ),
    build=Tagger,
)
"""


@pytest.fixture
def tagger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The `tagger` executor installed as a plugin (an entry point of a distribution on
    sys.path), the registry starting afresh so it scans for it."""
    site = tmp_path / "site"
    install_plugin(
        site,
        "tagger_executor",
        TAGGER_PLUGIN,
        "skill_eval.executors",
        "tagger = tagger_executor:SPEC",
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(__import__("sys").modules, "tagger_executor", raising=False)
    base.REGISTRY.reset()
    yield
    base.REGISTRY.reset()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory holding a one-task suite and a skill; the tests run inside it."""
    write_suite(
        tmp_path / "suite",
        [{"id": "t", "prompt": "say hi", "judge": {"type": "contains", "expected": ["TAG="]}}],
    )
    write_skill(tmp_path / "skill")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    return run_cli(
        "run",
        "--task-suite",
        "suite/task_suite.yaml",
        "--skill-path",
        "skill",
        "--no-baseline",
        "--state-root",
        "state",
        "-q",
        *args,
    )


def seen(out: str) -> tuple[str, dict]:
    """What the executor answered (its config, as it saw it) and the manifest's executor."""
    data = read_json(out.strip())
    return data["candidate_results"][0]["attempts"][0]["output"], data["manifest"]["executor"]


def test_a_plugin_executor_takes_its_options_from_the_command_line(
    tagger: None, project: Path
) -> None:
    code, out, err = run(
        "--executor",
        "tagger",
        "--executor-option",
        "tag=from-cli",
        "--executor-option",
        "repeat=3",
        "--executor-option",
        "words=[a, b]",
    )
    assert code == 0, err
    output, executor = seen(out)
    assert output == "TAG=from-cli REPEAT=3 WORDS=a,b"
    assert executor == {"kind": "tagger", "model": None, "tag": "from-cli"}


def test_a_plugin_executor_takes_its_options_from_the_config_file(
    tagger: None, project: Path
) -> None:
    (project / "pyproject.toml").write_text(
        "[tool.skill-eval.executor]\n"
        'name = "tagger"\n'
        "\n"
        "[tool.skill-eval.executor.tagger]\n"
        'tag = "from-config"\n'
        "repeat = 2\n",
        encoding="utf-8",
    )
    code, out, err = run()
    assert code == 0, err
    assert seen(out)[0] == "TAG=from-config REPEAT=2 WORDS="
    # the command line beats the file, key by key
    code, out, err = run("--executor-option", "tag=from-cli")
    assert code == 0, err
    assert seen(out)[0] == "TAG=from-cli REPEAT=2 WORDS="
    # a table is read only when its executor runs
    code, out, err = run("--executor", "mock")
    assert code in (0, 1), err
    assert "TAG=" not in seen(out)[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--executor-option", "tga=x"),
            "Error: --executor-option tga=x: the 'tagger' executor has no option 'tga' "
            "(did you mean 'tag'?); its options: repeat, tag, words",
        ),
        (
            ("--executor-option", "repeat=many"),
            "Error: --executor-option repeat=many: must be an integer, got a string 'many' "
            "(option 'repeat' of the 'tagger' executor)",
        ),
        (
            ("--executor-option", "repeat=0"),
            "Error: --executor-option repeat=0: must be at least 1 (option 'repeat' of the "
            "'tagger' executor)",
        ),
        (
            ("--executor-option", "repeat=.nan"),
            "Error: --executor-option repeat=.nan: must be plain JSON data, got float nan "
            "(option 'repeat' of the 'tagger' executor)",
        ),
        (
            ("--executor-option", "tag"),
            "Error: --executor-option 'tag': must be KEY=VALUE (e.g. max_tokens=2048)",
        ),
        (
            ("--executor-option", "model=x"),
            "Error: --executor-option model=x: model is common to every executor: set it "
            "with --model",
        ),
        (
            ("--max-tokens", "100"),
            "Error: --max-tokens: sets the executor option 'max_tokens', which the 'tagger' "
            "executor does not have; its options: repeat, tag, words",
        ),
    ],
)
def test_bad_executor_options_are_one_line_errors(
    tagger: None, project: Path, args: tuple[str, ...], message: str
) -> None:
    code, out, err = run("--executor", "tagger", *args)
    assert code == 2 and out == ""
    assert err.splitlines() == [message]
    assert not (project / "state").exists()  # refused before anything ran


def test_a_bad_key_in_an_executor_table_names_the_file_and_line(
    tagger: None, project: Path
) -> None:
    config = project / "skill-eval.toml"
    config.write_text('executor.name = "tagger"\n[executor.tagger]\ntag = "x"\nrepaet = 2\n')
    code, _, err = run()
    assert code == 2
    assert err.splitlines() == [
        f"Error: {config}:4: [tool.skill-eval.executor.tagger] repaet: the 'tagger' executor "
        "has no option 'repaet' (did you mean 'repeat'?); its options: repeat, tag, words"
    ]
    # a table of an executor that does not run is checked all the same
    config.write_text('[executor.tagger]\ntag = ""\n')
    code, _, err = run("--mock")
    assert code == 2 and "tag: must be a non-empty string" in err
    config.write_text('[executor.taggr]\ntag = "x"\n')
    code, _, err = run("--mock")
    assert code == 2
    assert err.startswith(
        f"Error: {config}:1: [tool.skill-eval.executor.taggr]: unknown executor 'taggr' "
        "(did you mean 'tagger'?)"
    )


def test_an_executor_named_beside_its_table_says_how_to_name_it(project: Path) -> None:
    config = project / "pyproject.toml"
    config.write_text(
        '[tool.skill-eval]\nexecutor = "mock"\n[tool.skill-eval.executor.mock]\nmock_rules = true\n'
    )
    code, _, err = run()
    assert code == 2 and err.startswith(f"Error: {config}: not valid TOML: ")
    assert err.strip().endswith(
        'name the executor as executor.name = "NAME": TOML cannot make `executor` a string '
        "and a table"
    )
    config.write_text(
        '[tool.skill-eval]\nexecutor.name = "mock"\n[tool.skill-eval.executor.mock]\n'
        "mock_rules = true\n"
    )
    code, out, err = run()
    assert code in (0, 1), err
    assert read_json(out.strip())["manifest"]["executor"]["mock_rules"] is True


def test_credentials_are_never_options(project: Path) -> None:
    """An executor's `env` holds API keys: no option sets it, so run.json never keeps one."""
    code, _, err = run("--executor", "anthropic", "--executor-option", "env={KEY: secret}")
    assert code == 2
    assert "env cannot be set: an executor's environment (API keys) comes from the" in err
    assert not (project / "state").exists()


def test_the_jail_is_never_an_option(project: Path) -> None:
    """The summary and the artifact report the run's jail (--no-jail): an executor option that
    turned it off would run the candidate unconfined under a report that says otherwise."""
    code, _, err = run("--executor", "claude-cli", "--executor-option", "jail=none")
    assert code == 2
    assert "jail cannot be set: the jail is the run's: pass --no-jail" in err
    assert not (project / "state").exists()


def test_a_shorthand_the_executor_lacks_is_refused_wherever_it_comes_from(project: Path) -> None:
    code, _, err = run("--mock", "--claude-bin", "/bin/claude")
    assert code == 2
    assert err.splitlines() == [
        "Error: --claude-bin: sets the executor option 'claude_bin', which the 'mock' "
        "executor does not have; its options: max_tokens, mock_outputs, mock_rules, temperature"
    ]
    (project / "skill-eval.toml").write_text('mock = true\nallowed-tools = ["Read"]\n')
    code, _, err = run()
    assert code == 2
    assert err.strip().endswith(
        "an executor's options belong in its table, [tool.skill-eval.executor.NAME], "
        "read only when NAME runs"
    )
    assert f"{project / 'skill-eval.toml'}: key 'allowed-tools': sets the executor" in err


def test_a_shorthand_for_the_judges_grader_is_taken_when_only_the_judge_has_it(
    project: Path,
) -> None:
    """--claude-bin also points the claude-cli grader at its binary: with a mock executor
    judged by claude-cli it is not refused (the plan routes it to the grader)."""
    from skill_eval.plan.run_plan import RunPlan

    plan = RunPlan.from_flags(
        task_suite="suite/task_suite.yaml",
        standalone=True,
        skill_path="skill",
        executor="mock",
        judge_executor="claude-cli",
        claude_bin="/opt/claude",
    )
    assert dict(plan.executor.options) == {}
    assert dict(plan.judging.grader_options) == {"claude_bin": "/opt/claude"}


def test_backend_is_the_deprecated_name_of_runner(project: Path) -> None:
    code, _, err = run("--mock", "--backend", "threads")
    assert code in (0, 1), err
    assert "warning: --backend is deprecated; use --runner (where attempts run)" in err
    code, _, err = run("--mock", "--backend", "threads", "--runner", "ray")
    assert code == 2
    assert "--runner ray and --backend threads disagree; give --runner only" in err
    (project / "skill-eval.toml").write_text('backend = "threads"\n')
    code, _, err = run("--mock")
    assert code in (0, 1), err
    assert f"warning: {project / 'skill-eval.toml'}: key 'backend' is deprecated" in err


def test_run_help_is_in_sections() -> None:
    code, out, _ = run_cli("run", "--help")
    assert code == 0
    sections = [
        "Inputs:",
        "Executor:",
        "Executor option shorthands:",
        "Execution:",
        "Judging:",
        "Decision:",
        "Records:",
        "Console and config:",
    ]
    where = [out.find(f"  {title}") for title in sections]
    assert -1 not in where and where == sorted(where), where
    # each flag under its owner, the deprecated name hidden
    assert out.find("--runner") > out.find("Execution:") > out.find("--max-tokens")
    assert "--backend" not in out
    # each shorthand names the executors whose config has its option, read from the registry
    assert "Shorthand for --executor-option max_tokens=N (anthropic, mock, openai)" in " ".join(
        out.split()
    )
