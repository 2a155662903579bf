"""Evaluator sources, precedence and selection."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skill_eval.evaluators import EvaluatorError, load_registry, user_evaluators_dir


def evaluator(
    root: Path, name: str, categories: list[str], folder: str | None = None, dims: str = "only"
) -> Path:
    path = root / (folder or name) / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {name}\nkind: evaluator\ndescription: {name} from {root.name}\n"
        f"metadata:\n  categories: {categories}\n  dimensions:\n"
        f"    - name: {dims}\n      weight: 1.0\n      description: everything\n---\n"
        f"# {name}\n\nRubric from {root.name}.\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def roots(tmp_path: Path) -> dict[str, Path]:
    user = user_evaluators_dir()  # $XDG_DATA_HOME from the isolation fixture
    assert str(user).startswith(str(tmp_path))
    project = tmp_path / "project"
    return {
        "a": tmp_path / "dir-a",
        "b": tmp_path / "dir-b",
        "user": user,
        "project": project,
        "ws_evals": project / ".agents" / "evaluators",
    }


def test_user_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert user_evaluators_dir({"XDG_DATA_HOME": "/x", "HOME": "/h"}) == Path(
        "/x/skill-eval/evaluators"
    )
    assert user_evaluators_dir({"HOME": "/h"}) == Path("/h/.local/share/skill-eval/evaluators")
    assert user_evaluators_dir({"XDG_DATA_HOME": "rel", "HOME": "/h"}) == Path(
        "/h/.local/share/skill-eval/evaluators"
    )
    monkeypatch.delenv("XDG_DATA_HOME")
    assert user_evaluators_dir() == Path(os.environ["HOME"]) / ".local/share/skill-eval/evaluators"


def test_bundled_only(tmp_path: Path) -> None:
    reg = load_registry(project_dir=tmp_path)
    assert reg.names() == [
        "api-design",
        "code-review",
        "general",
        "prose-quality",
        "sql-safety",
        "test-quality",
    ]
    assert reg.problems == []
    assert [s.kind for s in reg.sources] == ["user", "project", "bundled"]


def test_precedence_overrides_by_name(roots: dict[str, Path]) -> None:
    evaluator(roots["a"], "code-review", ["code"])
    evaluator(roots["b"], "code-review", ["code"])
    evaluator(roots["user"], "code-review", ["code"])
    evaluator(roots["ws_evals"], "code-review", ["code"])
    evaluator(roots["ws_evals"], "general", [])
    reg = load_registry([roots["a"], roots["b"]], project_dir=roots["project"])
    winner = reg.get("code-review")
    assert winner.path == str(roots["a"] / "code-review" / "SKILL.md")
    assert winner.source == "evaluators-dir"
    assert reg.get("general").source == "project"
    assert len(reg.shadowed()) == 5  # b, user, project code-review; bundled both

    reg = load_registry([], project_dir=roots["project"])
    assert reg.get("code-review").source == "user"


def test_selection_explicit_then_category_then_general(roots: dict[str, Path]) -> None:
    reg = load_registry(project_dir=roots["project"])
    sel = reg.select("sql-safety", judge_category="code", task_category="docs")
    assert (sel.evaluator.name, sel.by) == ("sql-safety", "explicit")
    sel = reg.select(None, judge_category="code", task_category="docs")
    assert (sel.evaluator.name, sel.by, sel.category) == ("code-review", "judge-category", "code")
    sel = reg.select(None, None, task_category="DOCS")
    assert (sel.evaluator.name, sel.by) == ("prose-quality", "task-category")
    sel = reg.select(None, None, "finance")
    assert (sel.evaluator.name, sel.by) == ("general", "fallback")
    assert "no evaluator matches category 'finance'" in sel.reason
    sel = reg.select()
    assert (sel.evaluator.name, sel.by) == ("general", "fallback")


def test_custom_evaluator_wins_category_matches(roots: dict[str, Path]) -> None:
    evaluator(roots["ws_evals"], "zz-house-style", ["code"])
    evaluator(roots["user"], "my-code", ["code", "python"])
    evaluator(roots["user"], "aa-code", ["code"])
    reg = load_registry(project_dir=roots["project"])
    sel = reg.select(task_category="code")
    # user beats project beats bundled; within the user folder, the name breaks the tie
    assert sel.evaluator.name == "aa-code"
    assert sel.candidates == (
        "aa-code (user)",
        "my-code (user)",
        "zz-house-style (project)",
        "code-review (bundled)",
    )
    assert "chosen over my-code (user)" in sel.reason
    assert sel.to_dict()["by"] == "task-category"


def test_overridden_evaluator_loses_its_categories(roots: dict[str, Path]) -> None:
    # a user 'code-review' that no longer claims 'code' hides the bundled one entirely
    evaluator(roots["user"], "code-review", ["python"])
    reg = load_registry(project_dir=roots["project"])
    assert reg.select(task_category="code").evaluator.name == "general"
    assert reg.select(task_category="python").evaluator.source == "user"


def test_unknown_explicit_name_lists_the_available(tmp_path: Path) -> None:
    reg = load_registry(project_dir=tmp_path)
    with pytest.raises(EvaluatorError) as info:
        reg.select("code-reveiw")
    assert str(info.value).startswith(
        "unknown evaluator 'code-reveiw'; available: api-design, code-review, general"
    )


def test_broken_files_are_skipped_and_reported(roots: dict[str, Path]) -> None:
    bad = evaluator(roots["user"], "code-review", ["code"])
    bad.write_text(bad.read_text().replace("weight: 1.0", "weight: 0.5"))
    evaluator(roots["user"], "twin", ["x"], folder="one")
    evaluator(roots["user"], "twin", ["x"], folder="two")
    (roots["user"] / "SKILL.md").write_text("stray")
    reg = load_registry([roots["a"]], project_dir=roots["project"])
    messages = sorted(str(p) for p in reg.problems)
    assert messages == sorted(
        [
            f"{roots['a']}: evaluators dir does not exist or is not a directory",
            f"{bad}: metadata.dimensions: weights must sum to 1.0 (within 1e-06); 0.5 = 0.5",
            f"{roots['user']}/SKILL.md: an evaluators dir holds one folder per evaluator; move "
            f"this "
            "file into a sub-folder named after the evaluator",
            f"{roots['user']}/two/SKILL.md: name: duplicate evaluator name 'twin' in one source "
            f"(also {roots['user']}/one/SKILL.md)",
        ]
    )
    # the broken user file does not hide the bundled evaluator of the same name
    assert reg.get("code-review").source == "bundled"
    with pytest.raises(EvaluatorError):
        reg.raise_for_problems()
