"""A skill is identified by all of it: the tree hash over every file, in the artifact's
manifest next to the SKILL.md hash, and the warnings when arms are the same skill."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skill_eval.engine import artifact
from skill_eval.errors import SkillError
from skill_eval.inputs.arms import arms_from_dict, arms_to_dict
from skill_eval.skills import load_skill, tree_sha256
from skill_eval.skills.tree import walk

from .helpers import DEMO_SUITE, read_json, run_cli, write_skill


def skill_with_script(folder: Path, script: str) -> Path:
    write_skill(folder, name=folder.name)
    (folder / "scripts").mkdir(exist_ok=True)
    (folder / "scripts" / "x.py").write_text(script, encoding="utf-8")
    return folder


def run_standalone(tmp_path: Path, tag: str, candidate: Path, baseline: Path) -> dict:
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--skill-path",
        str(candidate),
        "--baseline-skill",
        str(baseline),
        "--task-suite",
        str(DEMO_SUITE),
        "--state-root",
        str(tmp_path / f"state-{tag}"),
        "--mock",
        "-q",
    )
    assert code in (0, 1, 3, 4), err
    data = read_json(out.strip())
    artifact.validate(data)
    return data


def test_baselines_differing_only_in_a_script_record_different_tree_hashes(tmp_path: Path) -> None:
    candidate = write_skill(tmp_path / "cand" / "demo")
    base = skill_with_script(tmp_path / "base" / "demo", "print(1)\n")
    first = run_standalone(tmp_path, "1", candidate, base)["manifest"]["arms"]["baseline"]
    (base / "scripts" / "x.py").write_text("print(2)\n", encoding="utf-8")
    second = run_standalone(tmp_path, "2", candidate, base)["manifest"]["arms"]["baseline"]
    assert first["skill_sha256"] == second["skill_sha256"]  # SKILL.md alone: the same
    assert first["skill_tree_sha256"] != second["skill_tree_sha256"]
    assert first["skill_name"] == "demo" and first["skill_directory"] == str(base.resolve())
    assert second["skill_tree_sha256"] == load_skill(base).tree_sha256


def test_same_tree_in_both_arms_is_a_void_comparison(tmp_path: Path) -> None:
    one = skill_with_script(tmp_path / "a" / "demo", "print(1)\n")
    two = skill_with_script(tmp_path / "b" / "demo", "print(1)\n")
    data = run_standalone(tmp_path, "same", one, two)
    arms = data["manifest"]["arms"]
    assert arms["candidate"]["skill_tree_sha256"] == arms["baseline"]["skill_tree_sha256"]
    assert data["evaluation"]["verdict"] == "error"
    assert "byte-identical" in data["evaluation"]["reason"]
    (two / "scripts" / "x.py").write_text("print(2)\n", encoding="utf-8")
    data = run_standalone(tmp_path, "differ", one, two)
    assert "byte-identical" not in (data["evaluation"].get("reason") or "")


def test_no_skill_arm_has_null_identity(tmp_path: Path) -> None:
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--skill-path",
        str(write_skill(tmp_path / "demo")),
        "--task-suite",
        str(DEMO_SUITE),
        "--state-root",
        str(tmp_path / "s"),
        "--mock",
        "-q",
    )
    assert code in (0, 1, 3, 4), err
    base = read_json(out.strip())["manifest"]["arms"]["baseline"]
    assert base["skill_tree_sha256"] is None and base["skill_name"] is None


def test_tree_hash_covers_names_contents_links_and_the_exec_bit(tmp_path: Path) -> None:
    folder = skill_with_script(tmp_path / "demo", "print(1)\n")
    text = (folder / "SKILL.md").read_text()
    first = tree_sha256(folder, text)
    assert tree_sha256(folder, text) == first  # deterministic
    seen = {first}

    def changed() -> str:
        digest = tree_sha256(folder, text)
        assert digest not in seen
        seen.add(digest)
        return digest

    (folder / "scripts" / "x.py").chmod(0o755)
    changed()
    (folder / "scripts" / "x.py").rename(folder / "scripts" / "y.py")
    changed()
    outside = tmp_path / "outside.txt"
    outside.write_text("v1", encoding="utf-8")
    (folder / "link.txt").symlink_to(outside)
    with_link = changed()
    outside.write_text("v2 (never read: links are recorded as links)", encoding="utf-8")
    assert tree_sha256(folder, text) == with_link
    assert tree_sha256(folder, text + "more") != with_link  # SKILL.md is the text under test
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref", encoding="utf-8")
    os.mkfifo(folder / "pipe")
    assert tree_sha256(folder, text) == with_link  # .git and special files are no part


def test_a_file_skill_is_identified_by_its_text_alone(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "demo")
    (folder / "other.md").write_text("not part of a file skill", encoding="utf-8")
    by_file = load_skill(folder / "SKILL.md")
    assert by_file.tree_sha256 == tree_sha256(None, by_file.content)
    assert load_skill(folder).tree_sha256 != by_file.tree_sha256


def test_links_to_folders_are_not_entered(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "demo")
    (folder / "sys").symlink_to("/sys")
    (folder / "proc").symlink_to("/proc")
    assert [(e.rel, e.kind) for e in walk(folder)] == [
        ("SKILL.md", "file"),
        ("proc", "link"),
        ("sys", "link"),
    ]


def test_too_many_files_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import skill_eval.skills.tree as tree

    folder = write_skill(tmp_path / "demo")
    for i in range(5):
        (folder / f"f{i}.md").write_text("x", encoding="utf-8")
    monkeypatch.setattr(tree, "MAX_TREE_FILES", 3)
    with pytest.raises(SkillError, match="holds more than 3 files"):
        tree_sha256(folder, "x")


def test_run_json_keeps_the_tree_hash(tmp_path: Path) -> None:
    from skill_eval.core.model import Arm
    from skill_eval.inputs.arms import Arms

    skill = load_skill(skill_with_script(tmp_path / "demo", "print(1)\n"))
    arms = Arms(Arm("candidate", skill, "candidate skill"), None, "absent", "standalone", None, "r")
    again = arms_from_dict(arms_to_dict(arms))
    assert again.candidate.skill is not None
    assert again.candidate.skill.tree_sha256 == skill.tree_sha256


def test_a_skills_own_evals_never_reach_the_model(tmp_path: Path) -> None:
    """skill-creator keeps test cases (with their expected outputs) in the skill's `evals/`:
    left out of the tree, so neither installed mode nor the file list shows them, while a
    nested `evals/` folder is the skill's own content."""
    from skill_eval.skills.files import skill_folder
    from skill_eval.skills.install import plan_install

    root = write_skill(tmp_path / "notes")
    (root / "evals" / "files").mkdir(parents=True)
    (root / "evals" / "evals.json").write_text('{"expectations": ["the answer"]}')
    (root / "evals" / "files" / "in.txt").write_text("input")
    (root / "references" / "evals").mkdir(parents=True)
    (root / "references" / "evals" / "guide.md").write_text("how to evaluate")
    assert [e.rel for e in walk(root)] == ["SKILL.md", "references/evals/guide.md"]
    skill = load_skill(root)
    assert plan_install(skill).files == ["notes/SKILL.md", "notes/references/evals/guide.md"]
    folder = skill_folder(skill)
    assert folder is not None and "evals.json" not in folder.listing()
    before = tree_sha256(root, skill.content)
    (root / "evals" / "evals.json").write_text('{"expectations": ["changed"]}')
    assert tree_sha256(root, skill.content) == before  # not part of the skill's identity
