"""Arms that name models (`--arm NAME=EXECUTOR:DELIVERY@MODEL`, references/arms.md): the grammar
and its refusals, the model reaching each arm's executor (the mock records it), and a run on two
models through the real anthropic SDK against the local Messages API, whose answers depend on
the model asked: each request carries its arm's model, and the artifact and the summary give
the skill's lift on each model and the change between models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skill_eval import Arm
from skill_eval.core.model import Skill
from skill_eval.engine.evaluation import executors_for
from skill_eval.errors import UsageError
from skill_eval.plan.arms import parse_arms, stored_arms
from skill_eval.plan.run_plan import RunPlan
from tests.fakes.anthropic_server import FakeAnthropic
from tests.helpers import (
    REPO,
    contains_task,
    read_json,
    run_cli,
    write_skill,
    write_suite,
)

AGENT = REPO / "task_suites" / "demo-agent"
TWO_MODELS = (
    "old=installed@m-old",
    "old-none=none@m-old",
    "new=installed@m-new",
    "new-none=none@m-new",
)


def flags(**more: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "task_suite": str(AGENT / "task_suite.yaml"),
        "standalone": True,
        "skill_path": str(AGENT / "skill" / "csv-report"),
    }
    return base | more


def test_an_arm_names_its_model_and_the_plan_keeps_it() -> None:
    plan = RunPlan.from_flags(**flags(arm=list(TWO_MODELS), reference_arm="new-none"))
    assert plan.inputs.arms == (
        "old=claude-cli:installed@m-old",
        "old-none=claude-cli:none@m-old",
        "new=claude-cli:installed@m-new",
        "new-none=claude-cli:none@m-new",
    )
    assert plan.inputs.reference_arm == "new-none"
    # one none arm per model: the same model's none arm is the default no more
    with pytest.raises(UsageError, match="none arms on several models; name the one"):
        RunPlan.from_flags(**flags(arm=list(TWO_MODELS)))
    one = RunPlan.from_flags(**flags(arm=["a=installed@m1", "b=installed@m2", "z=none@m2"]))
    assert one.inputs.reference_arm == "z"
    [vertex, bedrock] = stored_arms(
        ["v=anthropic:system@claude-3-5-sonnet@20240620", "b=anthropic:none@anthropic.c-v2:0"]
    )
    assert (vertex.executor, vertex.delivery, vertex.model) == (
        "anthropic",
        "system",
        "claude-3-5-sonnet@20240620",
    )
    assert (bedrock.delivery, bedrock.model) == ("none", "anthropic.c-v2:0")
    mocked = parse_arms(["a=claude-cli:installed@m1", "b=claude-cli:none@m1"], "mock", mock=True)
    assert [s.text for s in mocked] == ["a=mock:installed@m1", "b=mock:none@m1"]


@pytest.mark.parametrize(
    ("arms", "message"),
    [
        (["a=installed@", "b=none"], "--arm 'a=installed@': the model '' must be a model id"),
        (["a=installed@m 1", "b=none"], "the model 'm 1' must be a model id"),
        (["a=installed@m1", "b=installed@m1"], "arms 'a' and 'b' are the same"),
    ],
)
def test_bad_models_are_refused_in_one_line(arms: list[str], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        RunPlan.from_flags(**flags(arm=arms))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_the_config_table_takes_a_model(tmp_path: Path) -> None:
    config = tmp_path / "skill-eval.toml"
    config.write_text(
        "[arms]\n"
        'old = {delivery = "installed", model = "m-old"}\n'
        'new = "installed@m-new"\n'
        'none = "none@m-new"\n',
        encoding="utf-8",
    )
    code, out, err = run_cli(
        *("run", "--mock", "--config", str(config), "-q"),
        *("--task-suite", str(AGENT / "task_suite.yaml")),
        *("--skill-path", str(AGENT / "skill" / "csv-report")),
        *("--state-root", str(tmp_path / "state")),
    )
    assert code in (0, 1, 4), err
    arms = {a["name"]: a for a in read_json(out.strip())["arms"]["arms"]}
    assert {n: (a.get("model"), a["runs_on"]["model"]) for n, a in arms.items()} == {
        "old": ("m-old", "m-old"),
        "new": ("m-new", "m-new"),
        "none": ("m-new", "m-new"),
    }


def test_the_mock_runs_each_arm_on_its_model_and_says_so(tmp_path: Path) -> None:
    args = [
        *("run", "--mock", "-q", "--model", "m-flag"),
        *("--task-suite", str(AGENT / "task_suite.yaml")),
        *("--skill-path", str(AGENT / "skill" / "csv-report")),
        *("--state-root", str(tmp_path / "state"), "--reference-arm", "new-none"),
    ]
    for arm in (*TWO_MODELS, "plain=context"):
        args += ["--arm", arm]
    code, out, err = run_cli(*args)
    assert code in (0, 1, 4), err
    data = read_json(out.strip())
    arms = {a["name"]: a for a in data["arms"]["arms"]}
    # the arm's model beats --model; an arm without one runs on --model
    assert {n: a["runs_on"]["model"] for n, a in arms.items()} == {
        "old": "m-old",
        "old-none": "m-old",
        "new": "m-new",
        "new-none": "m-new",
        "plain": "m-flag",
    }
    [manifest] = (tmp_path / "state" / "runs").glob("*/run.json")
    kept = read_json(manifest)
    assert [a.get("model") for a in kept["arms"]["listed"]] == [
        "m-old",
        "m-old",
        "m-new",
        "m-new",
        None,
    ]
    assert kept["arm_executors"]["new"]["executor"]["model"] == "m-new"
    models = data["arms"]["models"]
    assert models["models"] == ["m-old", "m-new", None]
    assert [(e["arm"], e["reference"]) for e in models["lift"]] == [
        ("old", "old-none"),
        ("new", "new-none"),
    ]


def test_a_two_model_run_gives_the_lift_per_model_and_the_change_between_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mark = "SKILL-MARK-7e41"
    tasks = [contains_task(f"t{i}", "alpha") for i in range(8)]
    suite = write_suite(tmp_path / "suite", tasks)
    skill = write_skill(tmp_path / "skill", f"Say alpha. {mark}")
    # the skill helps on the old model; on the new one the model passes alone and the skill
    # now hurts
    rules = [
        {"model": "m-old", "system_contains": mark, "text": "alpha"},
        {"model": "m-new", "system_contains": mark, "text": "nothing"},
        {"model": "m-new", "text": "alpha"},
    ]
    with FakeAnthropic(rules=rules, default="nothing") as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        code, out, err = run_cli(
            *("run", "--task-suite", str(suite), "--skill-path", str(skill), "-q"),
            *("--state-root", str(tmp_path / "state"), "--executor", "anthropic"),
            *("--arm", "new=anthropic:system@m-new", "--arm", "old=anthropic:system@m-old"),
            *("--arm", "old-none=anthropic:none@m-old", "--arm", "new-none=anthropic:none@m-new"),
            *("--reference-arm", "new-none"),
        )
        requests = server.requests_to("/v1/messages")
    assert code in (0, 1, 4), err
    # each request carries its arm's model: the skill's mark only where the arm has the skill
    seen = sorted((r.body["model"], mark in str(r.body.get("system"))) for r in requests)
    assert seen == sorted(
        [("m-old", True)] * 8
        + [("m-old", False)] * 8
        + [("m-new", True)] * 8
        + [("m-new", False)] * 8
    )
    data = read_json(out.strip())
    rates = {a["name"]: a["pass_rate"] for a in data["arms"]["arms"]}
    assert rates == {"old": 1.0, "old-none": 0.0, "new": 0.0, "new-none": 1.0}
    assert data["evaluation"]["verdict"] == "fail"  # new against new-none: the skill now hurts
    assert code == 1  # shown worse
    models = data["arms"]["models"]
    assert models["to_model"] == "m-new"  # the reference's model: the one the run decides on
    lift = {e["model"]: e for e in models["lift"]}
    assert (lift["m-old"]["delta"], lift["m-new"]["delta"]) == (1.0, -1.0)
    low, high = lift["m-old"]["interval"]
    assert 0 < low < 1.0 <= high + 1e-9  # 8 of 8 tasks improved
    between = {e["delivery"]: e for e in models["between"]}
    assert (between["system"]["arm"], between["system"]["reference"]) == ("new", "old")
    assert between["system"]["delta"] == -1.0 and between["system"]["interval"][1] < 0
    assert between["none"]["delta"] == 1.0 and between["none"]["interval"][0] > 0
    [change] = models["lift_change"]
    assert (change["from_model"], change["to_model"], change["change"]) == ("m-old", "m-new", -2.0)
    code, table, err = run_cli("report", out.strip())
    assert code == 0, err
    assert "m-old: old vs old-none +1.0000" in table
    assert "system m-old -> m-new: new vs old -1.0000" in table
    assert "none m-old -> m-new: new-none vs old-none +1.0000" in table
    assert "(change -2.0000)" in table
    for form in ("markdown", "html"):
        code, page, err = run_cli("report", out.strip(), "--format", form)
        assert code == 0 and "m-new: new vs new-none -1.0000" in page, err


def test_evaluate_builds_each_named_executor_once_per_model() -> None:
    skill = Skill("s", "---\nname: s\ndescription: d\n---\nSay alpha.\n")
    arms = [
        Arm("new", skill, delivery="installed", model="m-new"),
        Arm("new-none", None, delivery="none", model="m-new"),
        Arm("old", skill, delivery="installed", model="m-old"),
    ]
    built = executors_for(arms, "mock")
    assert {n: e.describe()["model"] for n, e in built.items()} == {
        "new": "m-new",
        "new-none": "m-new",
        "old": "m-old",
    }
    assert built["new"] is not built["old"]


def test_a_verdict_between_arms_on_two_models_says_it_combines_skill_and_model(
    tmp_path: Path,
) -> None:
    """Issue 51: the headline compares the first arm with the reference; on different models
    its difference is the skill's effect and the model's together, and the verdict line says
    so and points at the per-model figures. On one model it says nothing of the kind."""
    from skill_eval.report.markdown import render_markdown
    from skill_eval.report.render import render_table

    base = [
        *("run", "--mock", "-q"),
        *("--task-suite", str(AGENT / "task_suite.yaml")),
        *("--skill-path", str(AGENT / "skill" / "csv-report")),
    ]
    code, out, err = run_cli(
        *base, "--state-root", str(tmp_path / "two"), "--reference-arm", "new-none",
        *(flag for arm in TWO_MODELS for flag in ("--arm", arm)),
    )  # fmt: skip
    assert code in (0, 1, 4), err
    data = read_json(out.strip())
    said = (
        "old runs on m-old and new-none on m-new: the difference combines the skill's effect "
        "with the model's (see the skill's lift per model)"
    )
    [verdict] = [line for line in render_table(data).splitlines() if line.startswith("verdict")]
    assert said in verdict
    assert said in render_markdown(data)
    code, out, err = run_cli(
        *base, "--state-root", str(tmp_path / "one"),
        "--arm", "a=installed@m1", "--arm", "z=none@m1",
    )  # fmt: skip
    assert code in (0, 1, 4), err
    assert "combines the skill's effect" not in render_table(read_json(out.strip()))
