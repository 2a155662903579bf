"""The pull-request gate (action.yml's logic, scripts/pr_gate.sh) against a temporary git
repository of skills: a base branch `main` and a pull request's branch `change`, the real
script, GitHub Actions' variables set and no key. Offline (the action's default): the changed
skills' evals are sound, or the gate fails naming the skill, the eval and why; the gate judges
the change (evals removed, none at all, the base's evals with evals-from base). Measured: the
verdicts, with `[mock]` beside a mock's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import REPO, checkout_closed_to_others, jail_missing, write_skill

GATE = REPO / "scripts" / "pr_gate.sh"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def evals(name: str, value: str, *graded: str) -> str:
    """skill-creator's evals.json: eval 1 checks that the output contains `value`; each of
    `graded` is a model-graded eval (an expectation)."""
    cases: list[dict[str, Any]] = [
        {"id": 1, "prompt": "p", "assertions": [{"type": "contains", "value": value}]}
    ]
    cases += [{"id": 2 + i, "prompt": "q", "expectations": [e]} for i, e in enumerate(graded)]
    return json.dumps({"skill_name": name, "evals": cases})


def suite(*tasks: dict[str, Any]) -> str:
    return yaml.safe_dump({"skill_id": "deep", "version": "1.0", "tasks": list(tasks)})


def checked(task_id: str, expected: str, reference: str = "hello world") -> dict[str, Any]:
    judge = {"type": "contains", "expected": [expected]}
    return {"id": task_id, "prompt": "p", "reference": reference, "judge": judge}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main: two skills with evals.json (checks that pass under --mock), one deep in a
    plugin with a task suite whose deterministic check passes its reference, one with no
    evals; the branch `change` is checked out."""
    repo = tmp_path / "repo"
    for name in ("good", "other"):
        skill = write_skill(repo / "skills" / name)
        (skill / "evals").mkdir()
        text = evals(name, "Mock", "The answer is polite")
        (skill / "evals" / "evals.json").write_text(text, encoding="utf-8")
    deep = write_skill(repo / "plugins" / "tools" / "skills" / "deep")
    (deep / "evals").mkdir()
    (deep / "evals" / "task_suite.yaml").write_text(
        suite(checked("greets", "hello")), encoding="utf-8"
    )
    write_skill(repo / "skills" / "bare")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "skills")
    git(repo, "checkout", "-q", "-b", "change")
    return repo


def touch(path: Path) -> None:
    path.write_text(path.read_text(encoding="utf-8") + "\nMore.\n", encoding="utf-8")


def gate(repo: Path, tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """scripts/pr_gate.sh as the action runs it: its defaults (offline, skills `.`), no key;
    `env` overrides. (the job summary's text, after the run)"""
    tmp_path.mkdir(parents=True, exist_ok=True)
    summary = tmp_path / "step_summary.md"
    summary.write_text("", encoding="utf-8")
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SKILL_EVAL_")},
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(REPO),
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_BASE_REF": "main",
        "GITHUB_STEP_SUMMARY": str(summary),
        "SKILL_EVAL_BASE": "main",  # no remote here: the base branch by its local name
        "SKILL_EVAL_REPORT_DIR": str(tmp_path / "report"),
        **env,
    }
    done = subprocess.run(
        ["bash", str(GATE)], cwd=repo, env=environment, capture_output=True, text=True, timeout=600
    )
    return done, summary.read_text(encoding="utf-8")


def row(summary: str, label: str) -> str:
    return next(line for line in summary.splitlines() if line.startswith(f"| {label} |"))


# --- offline: the action's default ------------------------------------------------------


def test_a_change_to_skills_with_sound_evals_passes_offline(repo: Path, tmp_path: Path) -> None:
    touch(repo / "skills" / "good" / "SKILL.md")
    touch(repo / "plugins" / "tools" / "skills" / "deep" / "SKILL.md")  # uncommitted
    done, summary = gate(repo, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "The changed skills' evals are sound." in summary
    assert row(summary, "skills/good").endswith("| 2 | 1 | 1 model-graded | sound |")
    assert row(summary, "plugins/tools/skills/deep").endswith("| 1 | 1 | - | sound |")
    assert "| skills/other |" not in summary  # unchanged: not checked
    assert "No model was called" in summary  # and no verdict about a skill:
    assert "PASS" not in summary and "FAIL" not in summary


def test_a_deterministic_check_failing_its_reference_fails_naming_the_eval(
    repo: Path, tmp_path: Path
) -> None:
    evals_file = repo / "plugins" / "tools" / "skills" / "deep" / "evals" / "task_suite.yaml"
    evals_file.write_text(suite(checked("greets", "goodbye")), encoding="utf-8")
    git(repo, "commit", "-qam", "a stricter check")
    done, summary = gate(repo, tmp_path)
    assert done.returncode == 1, done.stderr
    said = "eval 'greets' judge: fails the task's reference: missing: 'goodbye'"
    assert f"plugins/tools/skills/deep: {said}" in done.stdout
    assert said.replace("'", "&#x27;") in summary or said in summary
    assert "NOT SOUND" in row(summary, "plugins/tools/skills/deep")
    assert "Evals changed in this pull request: plugins/tools/skills/deep." in summary


def test_a_change_that_deletes_the_skill_s_evals_fails(repo: Path, tmp_path: Path) -> None:
    git(repo, "rm", "-rq", "skills/good/evals")
    git(repo, "commit", "-qm", "no more evals")
    done, summary = gate(repo, tmp_path)
    assert done.returncode == 1, done.stderr
    assert "removed or emptied the skill" in row(summary, "skills/good")
    # emptied rather than deleted: the same
    git(repo, "checkout", "-q", "main", "--", "skills/good/evals")
    (repo / "skills" / "good" / "evals" / "evals.json").write_text(
        json.dumps({"skill_name": "good", "evals": []}), encoding="utf-8"
    )
    done, summary = gate(repo, tmp_path / "emptied")
    assert done.returncode == 1, done.stderr
    assert "NOT SOUND" in row(summary, "skills/good")


def test_with_evals_from_base_the_pull_request_s_weakened_evals_are_not_run(
    repo: Path, tmp_path: Path
) -> None:
    """The change drops the model-graded eval and rewrites the check to pass on anything.
    Judged by its own evals the gate sees the weak check; judged by the base's, it checks
    the base's two evals and never the pull request's."""
    weak = json.dumps(
        {
            "skill_name": "good",
            "evals": [{"id": 1, "prompt": "p", "assertions": [{"type": "regex", "value": ".*"}]}],
        }
    )
    (repo / "skills" / "good" / "evals" / "evals.json").write_text(weak, encoding="utf-8")
    git(repo, "commit", "-qam", "easier evals")
    done, summary = gate(repo, tmp_path / "head")
    assert done.returncode == 1, done.stderr
    assert "passes on an empty output" in row(summary, "skills/good")
    done, summary = gate(repo, tmp_path / "base", SKILL_EVAL_EVALS_FROM="base")
    assert done.returncode == 0, done.stdout + done.stderr
    good = row(summary, "skills/good")
    assert "the base branch" in good and good.endswith("| 2 | 1 | 1 model-graded | sound |")
    assert "- eval-2" in summary  # the base's model-graded eval, which the change dropped


def test_a_changed_skill_with_no_evals_is_not_judged_unless_allowed(
    repo: Path, tmp_path: Path
) -> None:
    touch(repo / "skills" / "bare" / "SKILL.md")
    done, summary = gate(repo, tmp_path)
    assert done.returncode == 1, done.stderr
    assert row(summary, "skills/bare").endswith("| NOT JUDGED: no evals |")
    done, summary = gate(repo, tmp_path / "allowed", SKILL_EVAL_ALLOW_UNJUDGED="true")
    assert done.returncode == 0, done.stderr
    assert row(summary, "skills/bare").endswith("| not judged (no evals) |")


def test_one_unreadable_evals_file_fails_that_skill_and_the_others_are_checked(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "skills" / "good" / "evals" / "evals.json").write_text("{not json", encoding="utf-8")
    touch(repo / "skills" / "other" / "SKILL.md")
    done, summary = gate(repo, tmp_path)
    assert done.returncode == 1, done.stderr
    assert "NOT SOUND" in row(summary, "skills/good")
    assert row(summary, "skills/other").endswith("| sound |")


def test_bad_input_fails_the_gate_and_says_so_in_the_summary(repo: Path, tmp_path: Path) -> None:
    done, summary = gate(repo, tmp_path, SKILL_EVAL_SKILLS="no-such-folder")
    assert done.returncode == 2
    assert "The gate stopped before any check (exit 2)" in summary


def test_a_hostile_base_ref_is_refused_as_data(repo: Path, tmp_path: Path) -> None:
    touch(repo / "skills" / "good" / "SKILL.md")
    for ref in ("--output=/tmp/x", "main\nother"):
        done, _ = gate(repo, tmp_path / str(len(ref)), SKILL_EVAL_BASE=ref)
        assert done.returncode == 2, done.stderr
        assert "is not a git ref" in done.stderr


def test_skill_folders_with_hostile_names_are_judged_as_data(repo: Path, tmp_path: Path) -> None:
    """Folders a pull request names `--output=x` and `a:b`: paths handed to git as data, with
    evals read from the base branch through their blob ids."""
    for name in ("--output=x", "a:b"):
        skill = write_skill(repo / "skills" / name, name="odd")
        (skill / "evals").mkdir()
        text = evals("odd", "Mock")
        (skill / "evals" / "evals.json").write_text(text, encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "odd names")
    git(repo, "branch", "-f", "main", "HEAD")  # the base has them now
    for name in ("--output=x", "a:b"):
        (repo / "skills" / name / "evals" / "evals.json").unlink()
    done, summary = gate(repo, tmp_path, SKILL_EVAL_EVALS_FROM="base")
    assert done.returncode == 1, done.stderr
    for name in ("--output=x", "a:b"):
        assert "removed or emptied" in row(summary, f"skills/{name}")
    assert not (repo / "x").exists() and not Path("/tmp/x").exists()


# --- what the pull request names is shown as text ----------------------------------------


HOSTILE_ID = "<img src=x>"


def hostile_skill(repo: Path) -> None:
    """A skill folder named `a<!--b` whose evals hold a task id with an <img> tag."""
    skill = write_skill(repo / "skills" / "a<!--b", name="hostile")
    (skill / "evals").mkdir()
    tasks = [  # the model-graded one is listed by id (not checked offline)
        {"id": "first", "prompt": "p|q\nr", "judge": {"type": "contains", "expected": ["x"]}},
        {"id": HOSTILE_ID, "prompt": "p", "judge": {"type": "llm-rubric", "rubric": "polite"}},
    ]
    (skill / "evals" / "task_suite.yaml").write_text(
        yaml.safe_dump({"skill_id": "a<!--b", "version": "1.0", "tasks": tasks}),
        encoding="utf-8",
    )


def rendered(markdown: str) -> str:
    """The markdown as GitHub shows it: raw HTML allowed (a comment hides what follows)."""
    markdown_it = pytest.importorskip("markdown_it")
    return str(
        markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    )


def test_the_job_summary_shows_hostile_names_as_text(repo: Path, tmp_path: Path) -> None:
    hostile_skill(repo)
    touch(repo / "skills" / "good" / "SKILL.md")  # a row after the hostile one
    done, summary = gate(repo, tmp_path)
    assert "a&lt;!--b" in summary and "<!--" not in summary
    assert "<img" not in summary
    html = rendered(summary)
    assert "<img" not in html and "<!--" not in html
    assert "| skills/good |" in summary and "skills/good" in html  # not hidden by a comment
    assert "&lt;img src=x&gt;" in html  # the task id, as text


def test_the_measured_gate_s_summary_and_html_report_show_hostile_names_as_text(
    repo: Path, tmp_path: Path
) -> None:
    from tests.browser import Browser, find_chromium

    hostile_skill(repo)
    touch(repo / "skills" / "good" / "SKILL.md")
    done, summary = gate(
        repo, tmp_path, SKILL_EVAL_MODE="measured", SKILL_EVAL_ARGS="--mock --policy delta"
    )
    assert "<!--" not in summary and "<img" not in summary
    assert "| skills/a&lt;!--b |" in summary
    assert "[mock]" in summary
    pages = sorted((tmp_path / "report").glob("evaluation-*.html"))
    assert len(pages) == 2, done.stderr
    chromium = find_chromium()
    if chromium is None:
        pytest.skip("chromium is not installed (the summary was checked)")
    with Browser(chromium) as browser:
        texts = []
        for page in pages:
            browser.open(page)
            assert browser.eval("document.querySelectorAll('img').length") == 0
            texts.append(browser.eval("document.body.innerText"))
    hostile = next(t for t in texts if HOSTILE_ID in t)
    assert "a<!--b" in hostile and "[mock]" in hostile


# --- measured -----------------------------------------------------------------------------


def test_measured_with_evals_from_base_runs_the_base_s_evals(repo: Path, tmp_path: Path) -> None:
    """The base's check fails the mock's output; the change weakens it to one that passes.
    Judged by the base's evals the run fails; by the change's own it would pass."""
    strict = repo / "skills" / "good" / "evals" / "evals.json"
    strict.write_text(evals("good", "never said"), encoding="utf-8")
    git(repo, "commit", "-qam", "strict")
    git(repo, "branch", "-f", "main", "HEAD")
    strict.write_text(evals("good", "Mock"), encoding="utf-8")
    git(repo, "commit", "-qam", "weaker")
    measured = {"SKILL_EVAL_MODE": "measured", "SKILL_EVAL_ARGS": "--mock --policy delta"}
    done, summary = gate(repo, tmp_path / "head", **measured)
    assert done.returncode == 0, done.stderr
    assert "PASS \\[mock\\]" in row(summary, "skills/good")
    done, summary = gate(repo, tmp_path / "base", SKILL_EVAL_EVALS_FROM="base", **measured)
    assert done.returncode == 1, done.stderr
    assert "FAIL \\[mock\\]" in row(summary, "skills/good")
    assert "Evals changed in this pull request: skills/good." in summary


def test_measured_one_unreadable_evals_file_fails_only_that_skill(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "skills" / "good" / "evals" / "evals.json").write_text("{not json", encoding="utf-8")
    touch(repo / "skills" / "other" / "SKILL.md")
    done, summary = gate(
        repo, tmp_path, SKILL_EVAL_MODE="measured", SKILL_EVAL_ARGS="--mock --policy delta"
    )
    assert done.returncode == 2, done.stderr
    assert "evals cannot be read" in row(summary, "skills/good")
    assert "PASS \\[mock\\]" in row(summary, "skills/other")
    assert len(list((tmp_path / "report").glob("evaluation-*.html"))) == 1


# --- the jail on GitHub's ubuntu-latest, and the action itself ---------------------------


# What bwrap says on Ubuntu 24.04 (GitHub's ubuntu-latest) with AppArmor's restriction on
# unprivileged user namespaces: bubblewrap 0.9 with a network namespace (as ours), and without.
APPARMOR_SAYS = (
    "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted",
    "bwrap: setting up uid map: Permission denied",
)


@pytest.mark.parametrize("said", APPARMOR_SAYS)
def test_offline_under_an_apparmor_bwrap_runs_the_evals_code_in_a_container(
    repo: Path, tmp_path: Path, said: str
) -> None:
    """ubuntu-latest: AppArmor refuses bubblewrap's user namespaces, Podman is there. A
    stand-in bwrap fails as it does there; `auto` takes the container provider and the
    suite's python judge is checked in it."""
    from skill_eval.jail.container import PROVIDER as CONTAINER

    if CONTAINER.problem() is not None:
        pytest.skip(str(CONTAINER.problem()))
    if (closed := checkout_closed_to_others()) is not None:
        pytest.skip(closed)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bwrap").write_text(f"#!/bin/sh\necho '{said}' >&2\nexit 1\n")
    (bin_dir / "bwrap").chmod(0o755)
    deep = repo / "plugins" / "tools" / "skills" / "deep" / "evals" / "task_suite.yaml"
    python = {"type": "python", "callable": "tests.judge_helpers:alpha_or_boom"}
    task = {"id": "coded", "prompt": "p", "reference": "alpha", "judge": python}
    deep.write_text(suite(checked("greets", "hello"), task), encoding="utf-8")
    path = f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    done, summary = gate(repo, tmp_path / "gate", PATH=path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert row(summary, "plugins/tools/skills/deep").endswith("| 2 | 2 | - | sound |")
    assert "jail: auto chose the container provider (bubblewrap: " in done.stdout
    assert said.removeprefix("bwrap: ") in done.stdout


@pytest.mark.skipif(jail_missing() is not None, reason=str(jail_missing()))
def test_the_comment_is_its_own_step_and_never_fails_the_gate(repo: Path, tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"number": 7}), encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "gh-calls"
    fake_gh = bin_dir / "gh"  # a gh whose token may not write: it fails as GitHub would
    fake_gh.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexit 1\n', encoding="utf-8")
    fake_gh.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    touch(repo / "skills" / "good" / "SKILL.md")
    done, _ = gate(repo, tmp_path, GITHUB_EVENT_PATH=str(event), PATH=path)
    assert done.returncode == 0 and not calls.exists()  # the gate itself never comments
    done, _ = gate(repo, tmp_path, GITHUB_EVENT_PATH=str(event), PATH=path,
                   SKILL_EVAL_MODE="comment", GITHUB_REPOSITORY="o/r")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert calls.read_text().startswith("pr comment 7 --body-file")
    assert "--repo o/r" in calls.read_text()
    assert "could not comment (does the workflow grant pull-requests: write?)" in done.stderr


def test_the_action_gives_the_token_and_the_key_only_to_the_steps_that_need_them() -> None:
    action: dict[str, Any] = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    assert action["inputs"]["mode"]["default"] == "offline"
    assert action["inputs"]["skills"]["default"] == "."
    assert action["inputs"]["comment"]["default"] == "false"
    steps = action["runs"]["steps"]
    holding = {
        secret: [s.get("name", s.get("uses")) for s in steps if secret in (s.get("env") or {})]
        for secret in ("GH_TOKEN", "ANTHROPIC_API_KEY")
    }
    assert holding == {
        "GH_TOKEN": ["Comment on the pull request"],
        "ANTHROPIC_API_KEY": ["Gate the changed skills"],
    }
    gate_step = next(s for s in steps if s.get("id") == "gate")
    assert "inputs.mode == 'measured'" in gate_step["env"]["ANTHROPIC_API_KEY"]
    comment = next(s for s in steps if s.get("name") == "Comment on the pull request")
    assert comment["env"]["SKILL_EVAL_MODE"] == "comment"
    assert "scripts/pr_gate.sh" in gate_step["run"]
    uses = [step.get("uses", "") for step in steps]
    assert any(u.startswith("actions/upload-artifact@") for u in uses)
