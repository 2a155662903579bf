"""The skill folder as the model reads it through `read_skill_file`: the list shown after
SKILL.md, reads confined to the folder, text only, size-capped; and the run's warnings about
what the tool refuses (arms.delivery_notes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skill_eval.inputs.arms import delivery_notes
from skill_eval.skills import load_skill
from skill_eval.skills.files import MAX_READ_BYTES, skill_folder
from tests.helpers import write_skill

SECRET = "OUTSIDE-SECRET-51c2"


@pytest.fixture
def skill_dir(tmp_path: Path) -> Path:
    root = write_skill(tmp_path / "demo", "Read references/guide.md first.")
    (root / "references").mkdir()
    (root / "references" / "guide.md").write_text("GUIDE: use tabs\n", encoding="utf-8")
    (root / "assets").mkdir()
    (root / "assets" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    (tmp_path / "outside.txt").write_text(SECRET, encoding="utf-8")
    os.symlink(tmp_path / "outside.txt", root / "references" / "leak.md")
    os.symlink("guide.md", root / "references" / "alias.md")  # a link inside: readable
    return root


def test_the_listing_names_every_other_file_with_its_size(skill_dir: Path) -> None:
    folder = skill_folder(load_skill(skill_dir))
    assert folder is not None
    listing = folder.listing()
    assert "read_skill_file" in listing
    assert "- references/guide.md (16 bytes)" in listing
    assert "- assets/logo.png (11 bytes; a binary file, cannot be read)" in listing
    assert "references/leak.md" in listing and "a link outside the skill folder" in listing
    assert "- SKILL.md" not in listing
    assert SECRET not in listing


def test_reads_are_confined_to_the_folder_and_to_text(skill_dir: Path, tmp_path: Path) -> None:
    skill = load_skill(skill_dir)
    folder = skill_folder(skill)
    assert folder is not None
    assert folder.read("references/guide.md") == (True, "GUIDE: use tabs\n")
    assert folder.read("./references//guide.md") == (True, "GUIDE: use tabs\n")
    assert folder.read("references/alias.md") == (True, "GUIDE: use tabs\n")
    assert folder.read("SKILL.md") == (True, skill.content)
    refused = [
        "../outside.txt",
        str(tmp_path / "outside.txt"),
        "references/../../outside.txt",
        "references/leak.md",
        "assets/logo.png",
        "missing.md",
        "",
        None,
        7,
        "references\\guide.md",
        "a\0b",
    ]
    for path in refused:
        ok, text = folder.read(path)
        assert not ok and SECRET not in text and text, path
    assert "binary" in folder.read("assets/logo.png")[1]
    assert "outside the skill folder" in folder.read("references/leak.md")[1]


def test_a_file_swapped_for_a_link_after_listing_is_refused(
    skill_dir: Path, tmp_path: Path
) -> None:
    folder = skill_folder(load_skill(skill_dir))
    assert folder is not None
    guide = skill_dir / "references" / "guide.md"
    guide.unlink()
    os.symlink(tmp_path / "outside.txt", guide)
    ok, text = folder.read("references/guide.md")
    assert not ok and "outside the skill folder" in text and SECRET not in text


def test_big_text_is_cut_and_says_so(tmp_path: Path) -> None:
    root = write_skill(tmp_path / "big")
    (root / "huge.md").write_text("é" * MAX_READ_BYTES, encoding="utf-8")  # 2 bytes a char
    folder = skill_folder(load_skill(root))
    assert folder is not None
    ok, text = folder.read("huge.md")
    assert (
        ok
        and text.startswith("é" * 100)
        and text.endswith(f"[cut: only the first {MAX_READ_BYTES} bytes of huge.md are shown]")
    )
    assert len(text.encode("utf-8")) < MAX_READ_BYTES + 200
    assert any("first 256 KiB" in w and "huge.md" in w for w in folder.warnings())


def test_one_file_skills_and_no_skill_have_no_folder(tmp_path: Path) -> None:
    alone = write_skill(tmp_path / "alone")
    assert skill_folder(load_skill(alone)) is None
    assert skill_folder(load_skill(alone / "SKILL.md")) is None
    assert skill_folder(None) is None


def test_the_run_warns_once_about_what_the_tool_refuses(skill_dir: Path) -> None:
    skill = load_skill(skill_dir)
    notes = delivery_notes(skill, "system", "anthropic")
    assert len(notes) == 1
    assert "read_skill_file refuses 2 of the skill's files" in notes[0]
    assert "assets/logo.png (a binary file)" in notes[0]
    assert "references/leak.md (a link outside the skill folder)" in notes[0]
    # executors that send SKILL.md alone still say that the whole folder is missing
    [mock] = delivery_notes(skill, "system", "mock")
    assert "sends SKILL.md alone" in mock


def test_a_clean_folder_gives_no_warning(tmp_path: Path) -> None:
    root = write_skill(tmp_path / "clean")
    (root / "reference.md").write_text("ref\n", encoding="utf-8")
    assert delivery_notes(load_skill(root), "prepend", "anthropic") == []
