"""Review roles and the improver resolve their model service through the executor registry:
a plugin executor that offers a text model (a real entry point) serves both on the real
command line; one that offers none is refused saying so; `--backend` is a deprecated alias."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from skill_eval.errors import ExecutorError
from skill_eval.executors import base
from tests.helpers import read_json, run_cli
from tests.review_script import builder_reply, decision, plan, review_skill, suite_files
from tests.test_improve_cli import _improver_reply, _write_inputs
from tests.test_model_seam import ECHO_PLUGIN, install_plugin

GROUP = "skill_eval.executors"
# A plugin executor whose text model replays scripted replies per label (who asks) from the
# JSON file in $SCRIBE_REPLIES and logs every request it gets to $SCRIBE_LOG.
SCRIBE_PLUGIN = """
import json, os, re
from dataclasses import dataclass
from skill_eval.core.model import ExecutionResult, Usage
from skill_eval.executors.base import ExecutorBase, ExecutorConfig, ExecutorSpec, config_schema
from skill_eval.executors.text_model import TextModelError, TextReply

@dataclass(frozen=True)
class ScribeConfig(ExecutorConfig):
    pass

class Scribe(ExecutorBase):
    name = "scribe"
    def __init__(self, config):
        self.config = config
    def run(self, request):
        return ExecutionResult(output="scribe")

class ScribeText:
    def __init__(self, config, settings):
        with open(os.environ["SCRIBE_REPLIES"], encoding="utf-8") as f:
            self.replies = json.load(f)
    def complete(self, request):
        with open(os.environ["SCRIBE_LOG"], "a", encoding="utf-8") as f:
            f.write(json.dumps({"label": request.label, "model": request.model,
                                "system": request.system, "prompt": request.prompt}) + "\\n")
        queue = self.replies.get(request.label) or []
        if not queue:
            raise TextModelError(f"scribe: no reply left for {request.label}")
        text = queue.pop(0)  # a model that answers in the tag the prompt asks for
        for tag in re.findall(r"<(decision-[0-9a-f]+)>", request.prompt)[-1:]:
            text = text.replace("<decision>", f"<{tag}>").replace("</decision>", f"</{tag}>")
        return TextReply(text, Usage(input_tokens=10, output_tokens=5), "scribe-1")

SPEC = ExecutorSpec(name="scribe", config_cls=ScribeConfig,
                    schema=config_schema(ScribeConfig, {}), build=Scribe, text_model=ScribeText)
"""


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The `scribe` (text model) and `echo` (attempts only) executors installed as entry-point
    plugins; the log file scribe writes."""
    site = tmp_path / "site"
    install_plugin(site, "scribe_exec", SCRIBE_PLUGIN, GROUP, "scribe = scribe_exec:SPEC")
    install_plugin(site, "echo_executor", ECHO_PLUGIN, GROUP, "echo = echo_executor:SPEC")
    monkeypatch.syspath_prepend(str(site))
    log = tmp_path / "scribe.jsonl"
    monkeypatch.setenv("SCRIBE_LOG", str(log))
    base.REGISTRY.reset()
    yield log
    base.REGISTRY.reset()


def _replies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, replies: dict[str, list[str]]
) -> None:
    path = tmp_path / "replies.json"
    path.write_text(json.dumps(replies), encoding="utf-8")
    monkeypatch.setenv("SCRIBE_REPLIES", str(path))


def _logged(log: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_registry_lists_the_executors_with_a_text_model(plugins: Path) -> None:
    assert base.text_model_names() == ["anthropic", "claude-cli", "openai", "scribe"]
    with pytest.raises(ExecutorError) as caught:
        base.create_text_model("echo")
    assert str(caught.value) == (
        "executor 'echo' cannot serve as a model (review roles, the improver): "
        "use one of anthropic, claude-cli, openai, scribe"
    )


def test_a_plugin_executor_serves_the_review_roles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plugins: Path
) -> None:
    _replies(
        tmp_path,
        monkeypatch,
        {
            "orchestrator": [plan()],
            "builder": [builder_reply(suite_files(True))],
            "visionary": [decision("approved")],
        },
    )
    code, out, err = run_cli(
        "review",
        str(review_skill(tmp_path)),
        "--state-root",
        str(tmp_path / "s"),
        "--executor",
        "scribe",
        "--qa-executor",
        "mock",
        "--models",
        "builder=model-b",
    )
    assert code == 0, err
    record = read_json(out.strip())
    assert record["decision"] == "approved"
    calls = _logged(plugins)
    assert [c["label"] for c in calls] == ["orchestrator", "builder", "visionary"]
    assert [c["model"] for c in calls] == [base.DEFAULT_MODEL, "model-b", base.DEFAULT_MODEL]
    assert "You are the **builder**" in calls[1]["system"]
    assert {role: u["models"] for role, u in record["usage"].items()} == {
        role: ["scribe-1"] for role in ("orchestrator", "builder", "visionary")
    }
    # The QA runs went to the mock executor, not to scribe (whose attempts say "scribe").
    qa = read_json(next((tmp_path / "s" / "reviews").iterdir()) / "round-1" / "qa.output.json")
    assert (qa["candidate_rate"], qa["baseline_rate"]) == (1.0, 0.0)


def test_a_plugin_executor_serves_as_the_improver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plugins: Path
) -> None:
    skill, suite = _write_inputs(tmp_path)
    _replies(tmp_path, monkeypatch, {"improver": [_improver_reply()]})
    code, out, err = run_cli(
        "improve",
        "--skill-path",
        str(skill),
        "--task-suite",
        str(suite),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "--improver",
        "scribe",
        "--improver-model",
        "model-i",
    )
    assert code == 0, err
    [call] = _logged(plugins)
    assert (call["label"], call["model"]) == ("improver", "model-i")
    assert "You improve an agent skill" in call["system"]
    ranking = read_json(out.strip())
    assert ranking["improve"]["tokens"] == 15  # the plugin's usage is counted
    best = ranking["scored_candidates"][0]
    assert best["proposed"] and "[rule:delta]" in best["skill_content"]


@pytest.mark.parametrize("command", ["review", "improve"])
def test_an_executor_without_a_text_model_is_refused_naming_those_that_have_one(
    tmp_path: Path, plugins: Path, command: str
) -> None:
    if command == "review":
        args = ["review", str(review_skill(tmp_path)), "--mock", "--executor", "echo"]
    else:
        skill, suite = _write_inputs(tmp_path)
        args = ["improve", "--skill-path", str(skill), "--task-suite", str(suite), "--mock"]
        args += ["--improver", "echo"]
    code, _out, err = run_cli(*args, "--state-root", str(tmp_path / "s"))
    assert code == 2
    assert (
        "the 'echo' executor runs attempts but cannot serve as a model (it offers no text "
        "model); executors that can: mock, anthropic, claude-cli, openai, scribe"
    ) in err
    assert not (tmp_path / "s").exists()  # refused before anything ran


def test_an_unknown_model_service_lists_those_that_can_serve(tmp_path: Path) -> None:
    code, _out, err = run_cli("review", str(review_skill(tmp_path)), "--mock", "--executor", "nope")
    assert code == 2
    assert "'nope' is not one of 'mock', 'anthropic', 'claude-cli'" in err


def test_backend_is_a_hidden_deprecated_alias_of_executor(tmp_path: Path) -> None:
    skill = review_skill(tmp_path)
    state = str(tmp_path / "s")
    code, _out, err = run_cli(
        "review", str(skill), "--state-root", state, "--mock", "--backend", "mock"
    )
    assert code == 0, err
    assert "warning: --backend is deprecated; use --executor" in err
    _code, help_text, _err = run_cli("review", "--help")
    assert "--executor" in help_text and "--backend" not in help_text
    code, _out, err = run_cli(
        "review", str(skill), "--state-root", state, "--backend", "mock", "--executor", "mock"
    )
    assert code == 2
    assert "Error: --backend is the old name of --executor; give only --executor" in err
