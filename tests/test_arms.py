"""Arms that differ by agent and delivery (`--arm NAME=EXECUTOR:DELIVERY`, references/arms.md):
the flags and the config table, each refusal in one line, the mock's dry run of the agent demo
with four arms (pass rates, whether the skill fired, three paired comparisons and the lift when
it fired, in the artifact and every report), resume, rejudge and shards with arm names, a run
whose arms run on two executors (the mock and the real anthropic SDK against the local Messages
API), and `evaluate` asking each arm's executor as its delivery says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skill_eval import Arm, ExecutionRequest, ExecutionResult, evaluate, load_suite
from skill_eval.core.execution import NUDGE
from skill_eval.core.model import Skill
from skill_eval.engine import artifact as artifact_mod
from skill_eval.errors import UsageError
from skill_eval.executors.base import ExecutorBase
from skill_eval.plan.run_plan import RunPlan
from skill_eval.report.html import render_html
from skill_eval.report.markdown import render_markdown
from skill_eval.report.render import render_table
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import (
    REPO,
    contains_task,
    journal_records,
    read_json,
    run_cli,
    write_outputs,
    write_skill,
    write_suite,
)

AGENT = REPO / "task_suites" / "demo-agent"
FOUR = ("installed=installed", "context=context", "nudged=nudged", "none=none")


def demo_args(tmp_path: Path, *more: str, arms: tuple[str, ...] = FOUR) -> list[str]:
    args = [
        "run",
        "--mock",
        "--task-suite",
        str(AGENT / "task_suite.yaml"),
        "--skill-path",
        str(AGENT / "skill" / "csv-report"),
        "--mock-outputs",
        str(AGENT / "mock_arms.yaml"),
        "--state-root",
        str(tmp_path / "state"),
        "-q",
    ]
    for arm in arms:
        args += ["--arm", arm]
    return args + list(more)


def flags(**more: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "task_suite": str(AGENT / "task_suite.yaml"),
        "standalone": True,
        "skill_path": str(AGENT / "skill" / "csv-report"),
    }
    return base | more


# -- flags and the config table -----------------------------------------------------------------


def test_arms_are_stored_canonical_with_the_none_arm_as_reference() -> None:
    plan = RunPlan.from_flags(**flags(arm=["a=installed", "b=mock:context", "zero=none"]))
    assert plan.executor.name == "claude-cli"  # --arm NAME=DELIVERY runs on --executor
    assert plan.inputs.arms == ("a=claude-cli:installed", "b=mock:context", "zero=claude-cli:none")
    assert plan.inputs.reference_arm == "zero"
    first = RunPlan.from_flags(**flags(arm=["a=installed", "b=context"], reference_arm=None))
    assert first.inputs.reference_arm == "a"  # no none arm: the first
    named = RunPlan.from_flags(**flags(arm=["a=installed", "b=context"], reference_arm="b"))
    assert named.inputs.reference_arm == "b"


def test_the_run_executor_is_the_first_arms_when_every_arm_names_one() -> None:
    plan = RunPlan.from_flags(**flags(arm=["x=mock:installed", "y=anthropic:system"]))
    assert plan.executor.name == "mock" and plan.executor.arm_options == {"anthropic": {}}
    mocked = RunPlan.from_flags(
        **flags(arm=["x=claude-cli:installed", "y=anthropic:system"], mock=True)
    )
    assert mocked.inputs.arms == ("x=mock:installed", "y=mock:system")  # --mock: a dry run


@pytest.mark.parametrize(
    ("arms", "more", "message"),
    [
        (["a=installed"], {}, "--arm: give two arms at least"),
        (
            ["a", "b=none"],
            {},
            "--arm 'a': must be NAME=EXECUTOR:DELIVERY[@MODEL] or NAME=DELIVERY[@MODEL]",
        ),
        (["a=:installed", "b=none"], {}, "--arm 'a=:installed': must be NAME=EXECUTOR:"),
        (["a=x:mock:none", "b=none"], {}, "--arm 'a=x:mock:none': must be NAME=EXECUTOR:"),
        (["a b=installed", "c=none"], {}, "the name 'a b' must be 1-40 letters"),
        (["a=contxt", "b=none"], {}, "unknown delivery 'contxt' (did you mean 'context'?)"),
        (["a=claude-clii:installed", "b=none"], {}, "unknown executor 'claude-clii' (did you mean"),
        (["a=installed", "a=none"], {}, "the name 'a' is given twice"),
        (["a=installed", "b=claude-cli:installed"], {}, "arms 'a' and 'b' are the same"),
        (["a=installed", "b=none"], {"reference_arm": "c"}, "--reference-arm 'c': no such arm"),
        ([], {"reference_arm": "a"}, "--reference-arm names one of the --arm arms"),
        (["a=installed", "b=none"], {"no_baseline": True}, "drop --baseline-skill/--no-baseline"),
        (["a=installed", "b=none"], {"budget": 20}, "--budget places attempts between two arms"),
        (["a=installed", "b=none"], {"early_stop": True}, "--early-stop looks at one comparison"),
        (
            ["a=installed", "b=none"],
            {"baseline_cache_dir": "cache"},
            "--baseline-cache-dir holds baselines of two-arm runs",
        ),
    ],
)
def test_nonsense_arms_are_refused_in_one_line(
    arms: list[str], more: dict[str, Any], message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        RunPlan.from_flags(**flags(arm=arms, **more))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_run_help_documents_the_arms() -> None:
    code, out, _ = run_cli("run", "--help")
    assert code == 0
    said = " ".join(out.split())
    assert out.find("--arm NAME=EXECUTOR:DELIVERY") < out.find("--reference-arm NAME")
    assert out.find("Inputs:") < out.find("--arm NAME") < out.find("Executor:")
    for words in (
        "an arm that runs the candidate skill on EXECUTOR (default: --executor) delivered as "
        "installed",
        "context (CLAUDE.md / AGENTS.md), nudged",
        "or none (no skill)",
        "compared with the reference arm (references/arms.md)",
        "With --arm: the arm the others are compared with (default: the none arm, else the first;"
        " required with none arms on several models)",
        "on MODEL after @ (default: the executor's)",
    ):
        assert words in said, words


def test_pipeline_mode_takes_no_arms(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--arm runs the candidate skill of --skill-path"):
        RunPlan.from_flags(
            task_suite="s.yaml", input="r.json", candidate_id="c1", arm=["a=installed", "b=none"]
        )


@pytest.mark.parametrize(
    ("arms", "message"),
    [
        (
            ["api=anthropic:installed", "none=anthropic:none"],
            "--arm api=anthropic:installed: the 'anthropic' executor cannot install a skill "
            "folder where its agent looks for skills",
        ),
        (
            ["api=anthropic:context", "none=mock:none"],
            "--arm api=anthropic:context: the 'anthropic' executor reads no always-on context",
        ),
    ],
)
def test_an_executor_that_cannot_deliver_so_is_refused_before_any_call(
    tmp_path: Path, arms: list[str], message: str
) -> None:
    suite = write_suite(tmp_path / "suite", [contains_task("t", "x")])
    skill = write_skill(tmp_path / "skill")
    args = ["run", "--task-suite", str(suite), "--skill-path", str(skill)]
    args += ["--state-root", str(tmp_path / "state"), "-q"]
    for arm in arms:
        args += ["--arm", arm]
    code, out, err = run_cli(*args)
    assert code == 2 and out == "", err
    assert err.strip().startswith(f"Error: {message}") and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "state" / "runs").exists()


def test_context_skill_mode_is_refused_by_an_executor_without_a_context_file(
    tmp_path: Path,
) -> None:
    suite = write_suite(tmp_path / "suite", [contains_task("t", "x")])
    skill = write_skill(tmp_path / "skill")
    code, _, err = run_cli(
        *("run", "--task-suite", str(suite), "--skill-path", str(skill), "-q"),
        *("--executor", "anthropic", "--skill-mode", "context", "--state-root", str(tmp_path)),
    )
    assert code == 2 and "--skill-mode context: the 'anthropic' executor reads no" in err


def test_a_trigger_suite_needs_arms_that_install_the_skill(tmp_path: Path) -> None:
    suite = REPO / "task_suites" / "demo-triggers"
    outputs = write_outputs(
        tmp_path / "outputs.yaml",
        {"plain": {"notes-to-pdf": {"triggered": True}}, "nudged": {"pdf-history": {}}},
    )
    args = ["run", "--mock", "--task-suite", str(suite / "task_suite.yaml")]
    args += ["--skill-path", str(suite / "skill" / "pdf-tools"), "--state-root", str(tmp_path)]
    args += ["-q", "--mock-outputs", str(outputs)]
    code, _, err = run_cli(*args, "--arm", "plain=installed", "--arm", "ctx=context")
    assert code == 2 and "arm 'ctx' (context) does not install it" in err
    code, out, err = run_cli(*args, "--arm", "plain=installed", "--arm", "nudged=nudged")
    assert code in (0, 1, 4), err
    data = read_json(out.strip())
    triggers = {a["name"]: a["triggers"] for a in data["arms"]["arms"]}
    assert set(triggers) == {"plain", "nudged"} and all(t is not None for t in triggers.values())
    (comparison,) = data["arms"]["comparisons"]
    assert comparison["arm"] == "nudged" and comparison["triggers"]["policy"] is not None


def test_the_config_file_arms_table_is_the_arm_flag(tmp_path: Path) -> None:
    config = tmp_path / "skill-eval.toml"
    config.write_text(
        'reference-arm = "none"\n\n[arms]\ninstalled = "installed"\n'
        'context = {delivery = "context"}\nnudged = "mock:nudged"\nnone = "none"\n',
        encoding="utf-8",
    )
    args = demo_args(tmp_path, "--config", str(config), arms=())
    code, out, err = run_cli(*args)
    assert code in (0, 1, 4), err
    data = read_json(out.strip())
    assert [a["name"] for a in data["arms"]["arms"]] == ["installed", "context", "nudged", "none"]
    config.write_text("[arms]\nbad = 3\n", encoding="utf-8")
    code, _, err = run_cli(*args)
    assert (
        code == 2
        and 'arms.bad: must be "EXECUTOR:DELIVERY[@MODEL]"' in err
        and "skill-eval.toml:1: arms.bad" in err
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'mock = true\n[arms]\na = "installed"\nb = "contxt"\n',
            "skill-eval.toml:2: arms.b: unknown delivery 'contxt' (did you mean 'context'?)",
        ),
        (
            'mock = true\n[arms]\na = "installed"\nb = "claude-clii:none"\n',
            "skill-eval.toml:2: arms.b: unknown executor 'claude-clii' (did you mean",
        ),
        ('[arms]\na = "installed"\n', "skill-eval.toml:1: arms: give two arms at least"),
        (
            'arm = ["a=installed", "b=x:y:none"]\n',
            "skill-eval.toml:1: arm 'b=x:y:none': must be NAME=EXECUTOR:DELIVERY",
        ),
        ('arm = "a=installed"\n', "skill-eval.toml:1: arm: give two arms at least"),
        (
            'arm = ["a=installed", "b=none"]\n[arms]\nc = "context"\nd = "none"\n',
            "skill-eval.toml:2: arms: give the arms once, as an `arms` table or an `arm` list",
        ),
    ],
)
def test_bad_arms_in_the_config_file_name_its_line_in_one_line(
    tmp_path: Path, text: str, message: str
) -> None:
    config = tmp_path / "skill-eval.toml"
    config.write_text(text, encoding="utf-8")
    code, out, err = run_cli(*demo_args(tmp_path, "--config", str(config), arms=()))
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "state" / "runs").exists()


# -- the mock's dry run of the agent demo, four arms ----------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One four-arm dry run of the agent demo, shared by the tests below."""
    tmp = tmp_path_factory.mktemp("arms-demo")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        args = demo_args(tmp, "--output", str(tmp / "artifact.json"), "--keep-workspaces", "all")
        code, out, err = run_cli(*args)
    assert code == 4, err  # five tasks cannot settle a comparison: not enough evidence
    return {"tmp": tmp, "artifact": read_json(Path(out.strip())), "err": err}


def test_four_arms_give_four_pass_rates_fired_rates_and_three_comparisons(
    demo: dict[str, Any],
) -> None:
    data = demo["artifact"]
    artifact_mod.validate(data)
    section = data["arms"]
    assert section["reference"] == "none"
    arms = {a["name"]: a for a in section["arms"]}
    assert {n: a["pass_rate"] for n, a in arms.items()} == {
        "installed": 0.4,
        "context": 0.8,
        "nudged": 1.0,
        "none": 0.2,
    }
    assert arms["installed"]["fired"] == {"how": "invoked", "rate": 0.2, "attempts": 5, "fired": 1}
    assert arms["nudged"]["fired"]["rate"] == 1.0
    assert arms["context"]["fired"]["how"] == "always" and arms["none"]["fired"] is None
    assert [a["reference"] for a in section["arms"]] == [False, False, False, True]
    assert {a["delivery"]: a["runs_on"]["skill_mode"] for a in section["arms"]} == {
        "installed": "installed",
        "context": "context",
        "nudged": "installed",
        "none": "installed",  # the agent as the installed arm runs it, without the skill
    }
    comparisons = {c["arm"]: c for c in section["comparisons"]}
    assert list(comparisons) == ["installed", "context", "nudged"]
    assert {n: c["delta"] for n, c in comparisons.items()} == {
        "installed": 0.2,
        "context": 0.6,
        "nudged": 0.8,
    }
    # Holm over the three comparisons, each at its level
    assert all("Holm over 3" in c["policy"]["reasoning"] for c in comparisons.values())
    # the skill is good when it fires and rarely does: +1 where it fired, +0 elsewhere
    fired = comparisons["installed"]["when_fired"]
    assert (fired["tasks"], fired["rate"], fired["reference_rate"], fired["delta"]) == (
        1,
        1.0,
        0.0,
        1.0,
    )
    assert comparisons["installed"]["when_not_fired"]["delta"] == 0.0
    assert comparisons["context"]["when_fired"] is None  # always in context: nothing to split


def test_the_top_level_fields_compare_the_first_arm_with_the_reference(
    demo: dict[str, Any],
) -> None:
    data = demo["artifact"]
    ev = data["evaluation"]
    assert (ev["execution_pass_rate"], ev["baseline_pass_rate"], ev["delta"]) == (0.4, 0.2, 0.2)
    arms = data["manifest"]["arms"]
    assert (arms["candidate"]["name"], arms["candidate"]["delivery"]) == ("installed", "installed")
    assert (arms["baseline"]["name"], arms["baseline"]["kind"]) == ("none", "none")
    assert [r["passed"] for r in data["candidate_results"]] == [
        r["passed"] for r in data["arms"]["arms"][0]["results"]
    ]


def test_the_journal_names_every_arm_and_the_mock_says_what_it_would_deliver(
    demo: dict[str, Any],
) -> None:
    (journal,) = (demo["tmp"] / "state").rglob("attempts.jsonl")
    records = journal_records(journal)
    assert sorted({r["arm"] for r in records}) == ["context", "installed", "none", "nudged"]
    assert len(records) == 20
    meta = {r["arm"]: r.get("meta") or {} for r in records if r["task_id"] == "sales-report"}
    assert meta["installed"]["would_install"] == ["csv-report/SKILL.md"]
    assert meta["context"]["would_write"] == ["CLAUDE.md"]
    assert "would_install" not in meta["none"] and "would_write" not in meta["none"]
    run = read_json(journal.parent / "run.json")
    assert set(run["arm_executors"]) == {"installed", "context", "nudged", "none"}


def test_every_report_shows_the_arms_side_by_side(demo: dict[str, Any]) -> None:
    data = demo["artifact"]
    table = render_table(data)
    head = next(line for line in table.splitlines() if line.startswith(" ") and "installed" in line)
    assert head.split() == ["installed", "context", "nudged", "none", "(reference)"]
    assert "20% (1/5 attempts)" in table and "always (in context)" in table
    markdown = render_markdown(data)
    assert "| pass rate | 0.4000 | 0.8000 | 1.0000 | 0.2000 |" in markdown
    assert "| lift when fired | +1.0000 (1.0000 vs 0.0000, 1 task)" in markdown
    html = render_html(data)
    assert html.count('<th class="arm') == 4 and 'class="arm reference" data-arm="none"' in html


def test_a_resumed_run_keeps_its_arms_and_a_changed_arm_is_another_run(
    demo: dict[str, Any], tmp_path: Path
) -> None:
    (journal,) = (demo["tmp"] / "state").rglob("attempts.jsonl")
    args = demo_args(
        demo["tmp"], "--resume", str(journal.parent), "--output", str(tmp_path / "a.json")
    )
    code, out, err = run_cli(*args)
    assert code == 4 and "resume: 20 finished attempts kept" in err
    assert len(journal_records(journal)) == 20  # nothing ran again
    assert read_json(out.strip())["arms"] == demo["artifact"]["arms"]
    changed = demo_args(
        demo["tmp"],
        "--resume",
        str(journal.parent),
        arms=("installed=installed", "context=prepend", "nudged=nudged", "none=none"),
    )
    code, _, err = run_cli(*changed)
    assert code == 2 and "changed: arms" in err


def test_rejudge_gives_the_same_arms(demo: dict[str, Any], tmp_path: Path) -> None:
    (journal,) = (demo["tmp"] / "state").rglob("attempts.jsonl")
    code, out, err = run_cli("rejudge", str(journal.parent), "--output", str(tmp_path / "r.json"))
    assert code == 4, err
    again, first = read_json(tmp_path / "r.json")["arms"], demo["artifact"]["arms"]
    assert again["comparisons"] == first["comparisons"]
    for ours, theirs in zip(again["arms"], first["arms"], strict=True):
        assert [r["status"] for r in ours.pop("results")] == [
            r["status"] for r in theirs["results"]
        ]
        assert ours == {k: v for k, v in theirs.items() if k != "results"}


def test_shards_of_a_four_arm_run_merge_into_its_figures(
    demo: dict[str, Any], tmp_path: Path
) -> None:
    dirs = []
    for index in (1, 2):
        code, out, err = run_cli(*demo_args(tmp_path, "--shard", f"{index}/2"))
        assert code == 0, err  # a shard decides nothing
        dirs.append(str(read_json(out.strip())["manifest"]["run_dir"]))
    code, _, err = run_cli("merge", *dirs, "--output", str(tmp_path / "merged.json"))
    assert code == 4, err
    merged = read_json(tmp_path / "merged.json")["arms"]
    mine = demo["artifact"]["arms"]
    for ours, theirs in zip(merged["arms"], mine["arms"], strict=True):
        assert (ours["name"], ours["pass_rate"], ours["fired"]) == (
            theirs["name"],
            theirs["pass_rate"],
            theirs["fired"],
        )
    assert [c["delta"] for c in merged["comparisons"]] == [c["delta"] for c in mine["comparisons"]]


# -- two executors in one run ---------------------------------------------------------------------


def test_arms_on_two_executors_run_in_one_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mark = "SKILL-MARK-91c2"
    suite = write_suite(tmp_path / "suite", [contains_task(f"t{i}", "alpha") for i in range(3)])
    skill = write_skill(tmp_path / "skill", f"Say alpha. {mark}")
    rules = [{"system_contains": mark, "text": "alpha"}]
    with FakeAnthropic(rules=rules, default="nothing") as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        code, out, err = run_cli(
            *("run", "--task-suite", str(suite), "--skill-path", str(skill), "-q"),
            *("--state-root", str(tmp_path / "state"), "--executor", "mock"),
            *("--arm", "api=anthropic:system", "--arm", "dry=mock:prepend"),
            *("--arm", "none=mock:none"),
        )
        requests = server.requests_to("/v1/messages")
    assert code in (0, 1, 4), err
    assert len(requests) == 3 and all(mark in r.system for r in requests)  # the api arm only
    data = read_json(out.strip())
    arms = {a["name"]: a for a in data["arms"]["arms"]}
    assert arms["api"]["runs_on"]["kind"] == "anthropic" and arms["api"]["pass_rate"] == 1.0
    assert arms["dry"]["runs_on"]["kind"] == "mock" and arms["none"]["runs_on"]["kind"] == "mock"
    assert arms["api"]["usage"]["input_tokens"] > 0 and arms["dry"]["usage"]["input_tokens"] == 0


# -- evaluate(): each arm's executor, asked as its delivery says ---------------------------------


class Recording(ExecutorBase):
    """A plugin-style executor that keeps every request it is asked."""

    name = "recording"
    skills_dir = ".claude/skills"
    context_file = "CLAUDE.md"

    def __init__(self) -> None:
        self.requests: list[ExecutionRequest] = []

    def run(self, request: ExecutionRequest) -> ExecutionResult:
        self.requests.append(request)
        return ExecutionResult(output="alpha")


def test_evaluate_asks_each_arms_executor_as_its_delivery_says(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s", [contains_task("t", "alpha")]))
    skill = Skill("tidy", "---\nname: tidy\ndescription: d\n---\nbody\n")
    one, other = Recording(), Recording()
    arms = [
        Arm("nudged", skill, delivery="nudged"),
        Arm("ctx", skill, delivery="context"),
        Arm("none", None, delivery="none"),
    ]
    result = evaluate(suite, arms, {"nudged": one, "ctx": other, "none": other}, reference="none")
    assert [c.arm for c in result.comparisons] == ["nudged", "ctx"]
    (nudged,) = one.requests
    assert nudged.task.prompt.endswith(NUDGE.format(name="tidy"))
    assert nudged.settings.skill_mode == "installed"
    ctx, none = sorted(other.requests, key=lambda r: r.arm)
    assert ctx.settings.skill_mode == "context" and ctx.task.prompt == "Do t"
    assert none.settings.skill_mode is None and none.skill is None
    with pytest.raises(UsageError, match="no executor for arm 'none'"):
        evaluate(suite, arms, {"nudged": one, "ctx": other})


def test_a_two_arm_artifact_has_no_arms_section(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", [contains_task("t", "x")])
    skill = write_skill(tmp_path / "skill")
    code, out, err = run_cli(
        *("run", "--mock", "--task-suite", str(suite), "--skill-path", str(skill), "-q"),
        *("--state-root", str(tmp_path / "state")),
    )
    data = read_json(out.strip())
    assert "arms" not in data and "name" not in data["manifest"]["arms"]["candidate"]
    run = read_json(Path(data["manifest"]["run_dir"]) / "run.json")
    assert "arms" not in run["plan"]["inputs"] and "arm_executors" not in run
    assert json.dumps(run["plan"]).count("arm_options") == 0


def test_the_arms_page_command_gives_what_the_page_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (REPO / "references" / "arms.md").read_text(encoding="utf-8")
    section = text.split("\n## ", 1)[0]
    [command] = [
        block.split("```", 1)[0]
        for block in section.split("```bash\n")[1:]
        if "--mock" in block.split("```", 1)[0]
    ]
    args = command.replace("\\\n", " ").split()
    assert args[:2] == ["skill-eval", "run"]
    monkeypatch.chdir(REPO)
    code, out, err = run_cli(*args[1:], "--state-root", str(tmp_path), "-q")
    assert code == 4, err
    rates = [a["pass_rate"] for a in read_json(out.strip())["arms"]["arms"]]
    assert rates == [0.4, 0.8, 1.0, 0.2]
    said = " ".join(section.split())
    assert "pass rates 0.40, 0.80, 1.00 and 0.20" in said
    assert "fired in 20% of the installed arm's attempts" in said
