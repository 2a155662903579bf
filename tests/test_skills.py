"""Skills, ranking artifacts and candidates, on real files under tmp_path."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from skill_eval.errors import SkillError
from skill_eval.skills import (
    MAX_SKILL_BYTES,
    load_ranking,
    load_skill,
    resolve_candidate,
    resolve_original,
    unapplied_plan,
)
from skill_eval.skills.plans import SUPPORTED_ACTIONS

ORIGINAL = "---\nname: demo\ndescription: A demo.\n---\n# Demo\n\n## Usage\n\n- old\n\n## End\n"


def md(body: str) -> str:
    """A valid SKILL.md (frontmatter with name and description) with this body."""
    return f"---\nname: demo\ndescription: A demo.\n---\n{body}"


@pytest.fixture
def skill_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "skills" / "demo-dir"
    (directory / "references").mkdir(parents=True)
    (directory / "SKILL.md").write_text(ORIGINAL, encoding="utf-8")
    (directory / "references" / "guide.md").write_text("# Guide\n\n## Tips\n", encoding="utf-8")
    (directory / "scripts").mkdir()
    (directory / "scripts" / "run.sh").write_text("#!/bin/sh\necho hi\n", encoding="utf-8")
    return directory


def tree_digest(root: Path) -> dict[str, str]:
    """Every file, directory and link under root, with content hashes and link targets."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            out[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            out[rel] = "dir"
    return out


def write_ranking(
    tmp_path: Path,
    candidates: list[dict[str, Any]],
    target: dict[str, Any] | None = None,
    **top: Any,
) -> Path:
    data: dict[str, Any] = {
        "run_id": "run-1",
        "lane": "docs",
        "scored_candidates": candidates,
        "extra_top_level": {"kept": True},
        **top,
    }
    data["target"] = {"path": "skills/demo-dir", "name": "demo"} if target is None else target
    path = tmp_path / "ranking.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def plan_candidate(cid: str = "c1", **plan: Any) -> dict[str, Any]:
    plan.setdefault("action", "append_markdown_section")
    plan.setdefault("section_heading", "## Examples")
    plan.setdefault("content_lines", ["one", "two"])
    return {"id": cid, "score": 3.5, "execution_plan": plan}


# load_skill


def test_load_skill_from_directory_and_file(skill_dir: Path) -> None:
    by_dir = load_skill(skill_dir)
    by_file = load_skill(skill_dir / "SKILL.md")
    assert (by_dir.name, by_dir.content, by_dir.origin) == (
        by_file.name,
        by_file.content,
        by_file.origin,
    )
    assert by_dir.name == "demo"
    assert by_dir.content == ORIGINAL
    assert str(skill_dir) in by_dir.origin
    # Only a directory is the skill's own: the folder around a file is not.
    assert by_dir.directory == skill_dir.resolve()
    assert by_file.directory is None


def test_load_skill_without_frontmatter_is_an_error_at_line_one(tmp_path: Path) -> None:
    # Before: the name fell back to the folder's and the run went on with no warning.
    (tmp_path / "proj" / "deep").mkdir(parents=True)
    (tmp_path / "proj" / "SKILL.md").write_text("# No frontmatter\n", encoding="utf-8")
    with pytest.raises(SkillError) as info:
        load_skill(tmp_path / "proj" / "SKILL.md")
    assert str(info.value).startswith(
        f"{tmp_path / 'proj' / 'SKILL.md'}:1: error: no YAML frontmatter"
    )


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda p: None, "skill not found"),
        (lambda p: p.mkdir(), "no SKILL.md in skill directory"),
        (lambda p: (p.mkdir(), (p / "SKILL.md").write_bytes(b"caf\xe9\n")), "not valid UTF-8"),
        (
            lambda p: (p.mkdir(), (p / "SKILL.md").write_bytes(b"x" * (MAX_SKILL_BYTES + 1))),
            "too large",
        ),
    ],
)
def test_load_skill_errors_name_the_path(tmp_path: Path, setup: Any, message: str) -> None:
    path = tmp_path / "bad-skill"
    setup(path)
    with pytest.raises(SkillError, match=message) as info:
        load_skill(path)
    assert "bad-skill" in str(info.value)


def test_load_skill_accepts_exactly_one_mebibyte(tmp_path: Path) -> None:
    head = f"---\nname: {tmp_path.name}\ndescription: big\n---\n".encode()
    (tmp_path / "SKILL.md").write_bytes(head + b"x" * (MAX_SKILL_BYTES - len(head)))
    assert len(load_skill(tmp_path).content) == MAX_SKILL_BYTES


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_load_skill_unreadable(tmp_path: Path) -> None:
    file = tmp_path / "SKILL.md"
    file.write_text("x", encoding="utf-8")
    file.chmod(0)
    with pytest.raises(SkillError, match="cannot read skill"):
        load_skill(file)


# load_ranking


def test_load_ranking_keeps_extra_keys(tmp_path: Path, skill_dir: Path) -> None:
    entry = {**plan_candidate(), "rationale": "why", "metrics": {"x": 1}}
    path = write_ranking(tmp_path, [entry], target={"path": "skills/demo-dir", "extra": 1})
    ranking = load_ranking(path)
    assert ranking.path == path.resolve()
    assert (ranking.run_id, ranking.lane) == ("run-1", "docs")
    assert ranking.candidate_ids == ["c1"]
    assert ranking.candidates[0]["rationale"] == "why"
    assert ranking.data["extra_top_level"] == {"kept": True}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"scored_candidates": []}, "run_id: is required"),
        ({"run_id": "", "scored_candidates": []}, "run_id: must be a non-empty string"),
        ({"run_id": "r"}, "scored_candidates: is required"),
        ({"run_id": "r", "scored_candidates": {}}, "scored_candidates: must be a list"),
        (
            {"run_id": "r", "scored_candidates": [{"id": "a"}, {"id": "b", "score": "9"}]},
            "scored_candidates[1].score: must be a number",
        ),
        (
            {"run_id": "r", "scored_candidates": [{"id": "a", "score": True}]},
            "scored_candidates[0].score: must be a number",
        ),
        (
            {"run_id": "r", "scored_candidates": [{"score": 1}]},
            "scored_candidates[0].id: is required",
        ),
        (
            {"run_id": "r", "scored_candidates": [{"id": " "}]},
            "scored_candidates[0].id: must be a non-empty string",
        ),
        (
            {"run_id": "r", "scored_candidates": ["c1"]},
            "scored_candidates[0]: must be a mapping, got a string 'c1'",
        ),
        (
            {"run_id": "r", "target": {"path": 3}, "scored_candidates": []},
            "target.path: must be a string",
        ),
        (
            {
                "run_id": "r",
                "scored_candidates": [
                    {"id": "a", "execution_plan": {"action": "x", "content_lines": "one"}}
                ],
            },
            "scored_candidates[0].execution_plan.content_lines: must be a list",
        ),
        (
            {"run_id": "r", "scored_candidates": [{"id": "a"}, {"id": "a"}]},
            "scored_candidates[1].id: duplicate id 'a' (also scored_candidates[0])",
        ),
        ([1, 2], "ranking.json: must be a mapping, got a list"),
    ],
)
def test_ranking_schema_errors_name_file_and_field(
    tmp_path: Path, data: Any, expected: str
) -> None:
    path = tmp_path / "ranking.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SkillError) as info:
        load_ranking(path)
    assert f"{path}: " in str(info.value)
    assert expected in str(info.value)


def test_ranking_reports_every_problem_at_once(tmp_path: Path) -> None:
    path = tmp_path / "ranking.json"
    path.write_text(json.dumps({"scored_candidates": [{"score": "x"}]}), encoding="utf-8")
    with pytest.raises(SkillError) as info:
        load_ranking(path)
    assert str(info.value).splitlines() == [
        f"{path}: run_id: is required",
        f"{path}: scored_candidates[0].id: is required",
        f"{path}: scored_candidates[0].score: must be a number, got a string 'x'",
    ]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"run_id": "r",\n "scored_candidates": [}', ":2:24: invalid JSON"),
        ('{"run_id": "r", "scored_candidates": [{"id": "a", "score": NaN}]}', "NaN"),
        ("", "invalid JSON"),
    ],
)
def test_ranking_json_errors(tmp_path: Path, raw: str, expected: str) -> None:
    path = tmp_path / "ranking.json"
    path.write_text(raw, encoding="utf-8")
    with pytest.raises(SkillError, match=expected) as info:
        load_ranking(path)
    assert str(path) in str(info.value)


def test_ranking_not_found(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match="ranking artifact not found: .*nope.json"):
        load_ranking(tmp_path / "nope.json")


# resolve_original


@pytest.mark.parametrize("target", ["skills/demo-dir", "skills/demo-dir/SKILL.md", "ABS"])
def test_resolve_original_relative_to_ranking(tmp_path: Path, skill_dir: Path, target: str) -> None:
    target = str(skill_dir) if target == "ABS" else target
    ranking = load_ranking(write_ranking(tmp_path, [], target={"path": target}))
    original = resolve_original(ranking)
    assert original.content == ORIGINAL
    is_file = target.endswith("SKILL.md")
    assert original.directory == (None if is_file else skill_dir.resolve())


@pytest.mark.parametrize("entry", [{"id": "c1", "content": md("# New\n")}, plan_candidate()])
def test_candidate_of_a_file_target_copies_only_that_file(
    tmp_path: Path, skill_dir: Path, entry: dict[str, Any]
) -> None:
    (skill_dir / "deep" / "secrets").mkdir(parents=True)
    (skill_dir / "deep" / "secrets" / ".env").write_text("TOKEN=1", encoding="utf-8")
    ranking = load_ranking(
        write_ranking(tmp_path, [entry], target={"path": "skills/demo-dir/SKILL.md"})
    )
    resolved = resolve_candidate(ranking, "c1", tmp_path / "work")
    directory = resolved.skill.directory
    assert directory is not None and directory.name == "demo-dir"
    assert [p.name for p in directory.iterdir()] == ["SKILL.md"]
    assert resolved.skill.content != ORIGINAL


def test_plan_on_another_file_needs_a_directory_target(tmp_path: Path, skill_dir: Path) -> None:
    entry = {**plan_candidate(section_heading="## More"), "target_path": "references/guide.md"}
    ranking = load_ranking(
        write_ranking(tmp_path, [entry], target={"path": "skills/demo-dir/SKILL.md"})
    )
    with pytest.raises(
        SkillError,
        match=r"target_path: 'references/guide.md' is not a file "
        r"in the skill: target.path names the file .*SKILL.md",
    ):
        resolve_candidate(ranking, "c1", tmp_path / "work")


def test_missing_original_is_an_error_never_an_empty_skill(tmp_path: Path) -> None:
    path = write_ranking(tmp_path, [plan_candidate()], target={"path": "gone"})
    ranking = load_ranking(path)
    message = f"original skill not found: {tmp_path / 'gone'} (target.path in {path})"
    with pytest.raises(SkillError) as info:
        resolve_original(ranking)
    assert str(info.value) == message
    with pytest.raises(SkillError) as info:
        resolve_candidate(ranking, "c1", tmp_path / "work")
    assert str(info.value) == message


def test_original_directory_without_skill_md(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    ranking = load_ranking(write_ranking(tmp_path, [], target={"path": "empty"}))
    with pytest.raises(SkillError, match="no SKILL.md in skill directory.*target.path in"):
        resolve_original(ranking)


def test_target_path_is_required_to_resolve_the_original(tmp_path: Path) -> None:
    ranking = load_ranking(write_ranking(tmp_path, [], target={}))
    with pytest.raises(SkillError, match=r"target\.path: is required"):
        resolve_original(ranking)


# resolve_candidate: lookup and inline content


def test_missing_candidate_lists_available_ids(tmp_path: Path, skill_dir: Path) -> None:
    ranking = load_ranking(write_ranking(tmp_path, [plan_candidate("a"), plan_candidate("b")]))
    with pytest.raises(SkillError, match="candidate 'zz' not found.*available ids: a, b"):
        resolve_candidate(ranking, "zz", tmp_path / "work")


def test_inline_candidate_gets_a_full_copy_of_the_original(tmp_path: Path, skill_dir: Path) -> None:
    before = tree_digest(skill_dir)
    text = md("# Better demo\n")
    ranking = load_ranking(write_ranking(tmp_path, [{"id": "c1", "score": 4, "content": text}]))
    work = tmp_path / "work"
    resolved = resolve_candidate(ranking, "c1", work)
    assert resolved.source == "inline"
    assert resolved.score == 4.0
    assert resolved.warnings == ()
    assert resolved.skill.content == text
    assert resolved.skill.name == "demo"
    directory = resolved.skill.directory
    assert directory is not None and directory.is_relative_to(work.resolve())
    assert directory.name == "demo-dir"
    assert (directory / "references" / "guide.md").read_text() == "# Guide\n\n## Tips\n"
    assert (directory / "SKILL.md").read_text() == text
    assert tree_digest(skill_dir) == before


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"skill_content": md("A"), "content": md("B"), "body": md("C")}, md("A")),
        ({"skill_content": "  ", "content": md("B"), "body": md("C")}, md("B")),
        ({"skill_content": None, "content": 7, "body": md("C")}, md("C")),
    ],
)
def test_inline_key_precedence(
    tmp_path: Path, skill_dir: Path, entry: dict[str, Any], expected: str
) -> None:
    ranking = load_ranking(write_ranking(tmp_path, [{"id": "c1", **entry}]))
    assert resolve_candidate(ranking, "c1", tmp_path / "w").skill.content == expected


def test_inline_with_missing_original_holds_only_skill_md(tmp_path: Path) -> None:
    ranking = load_ranking(
        write_ranking(
            tmp_path, [{"id": "c1", "body": md("# B\n")}], target={"path": "gone", "name": "demo"}
        )
    )
    resolved = resolve_candidate(ranking, "c1", tmp_path / "work")
    assert resolved.score is None
    directory = resolved.skill.directory
    assert directory is not None
    assert [p.name for p in directory.iterdir()] == ["SKILL.md"]
    assert resolved.skill.name == "demo"
    assert "original skill unavailable" in resolved.warnings[0]


def test_inline_and_plan_together_warns(tmp_path: Path, skill_dir: Path) -> None:
    entry = {**plan_candidate(), "skill_content": md("# Full\n")}
    ranking = load_ranking(write_ranking(tmp_path, [entry]))
    resolved = resolve_candidate(ranking, "c1", tmp_path / "work")
    assert resolved.skill.content == md("# Full\n")
    assert "execution_plan was ignored" in resolved.warnings[0]


def test_inline_identical_to_original_warns(tmp_path: Path, skill_dir: Path) -> None:
    ranking = load_ranking(write_ranking(tmp_path, [{"id": "c1", "content": ORIGINAL}]))
    resolved = resolve_candidate(ranking, "c1", tmp_path / "work")
    assert any("identical to the original" in w for w in resolved.warnings)


def test_inline_does_not_write_through_a_symlinked_skill_md(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere.md"
    real.write_text(ORIGINAL, encoding="utf-8")
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "SKILL.md").symlink_to(real)
    ranking = load_ranking(
        write_ranking(tmp_path, [{"id": "c1", "content": md("# New\n")}], target={"path": "linked"})
    )
    resolved = resolve_candidate(ranking, "c1", tmp_path / "work")
    assert resolved.skill.content == md("# New\n")
    assert real.read_text() == ORIGINAL


def test_candidate_without_a_skill(tmp_path: Path, skill_dir: Path) -> None:
    ranking = load_ranking(write_ranking(tmp_path, [{"id": "c1", "score": 2, "content": ""}]))
    with pytest.raises(SkillError) as info:
        resolve_candidate(ranking, "c1", tmp_path / "work")
    message = str(info.value)
    assert 'scored_candidates[0] (id "c1"): has no skill' in message
    assert "skill_content, content, body" in message
    assert all(action in message for action in SUPPORTED_ACTIONS)


# resolve_candidate: execution plans

PLAN_CASES = [
    ("append", {}, ORIGINAL + "\n## Examples\n\n- one\n- two\n"),
    (
        "replace",
        {
            "action": "replace_markdown_section",
            "section_heading": "## Usage",
            "content_lines": ["new"],
        },
        ORIGINAL.replace("## Usage\n\n- old\n", "## Usage\n- new\n"),
    ),
    (
        "insert",
        {"action": "insert_before_section", "section_heading": "## End", "content_lines": ["tip"]},
        ORIGINAL.replace("## End", "- tip\n\n## End"),
    ),
    (
        "frontmatter",
        {
            "action": "update_yaml_frontmatter",
            "frontmatter_updates": {"description": "Better.", "version": "2"},
        },
        ORIGINAL.replace("A demo.", "Better.\nversion: '2'"),
    ),
]


@pytest.mark.parametrize(
    ("plan", "expected"), [c[1:] for c in PLAN_CASES], ids=[c[0] for c in PLAN_CASES]
)
def test_plan_applied_to_a_copy(
    tmp_path: Path, skill_dir: Path, plan: dict[str, Any], expected: str
) -> None:
    before = tree_digest(skill_dir)
    ranking = load_ranking(write_ranking(tmp_path, [plan_candidate(**plan)]))
    resolved = resolve_candidate(ranking, "c1", tmp_path / "work")
    assert resolved.source == "execution_plan"
    assert resolved.warnings == ()
    assert resolved.score == 3.5
    assert resolved.skill.content == expected
    assert resolved.skill.name == "demo"
    directory = resolved.skill.directory
    assert directory is not None and directory.is_relative_to((tmp_path / "work").resolve())
    assert (directory / "scripts" / "run.sh").is_file()
    assert tree_digest(skill_dir) == before


@pytest.mark.parametrize(
    ("plan", "why"),
    [
        ({"section_heading": "## Usage"}, "a section 'Usage' is already present"),
        (
            {"action": "replace_markdown_section", "section_heading": "## Nope"},
            "heading '## Nope' not found",
        ),
        (
            {"action": "insert_before_section", "section_heading": "Nope"},
            "heading 'Nope' not found",
        ),
    ],
)
def test_plan_that_changes_nothing_voids_the_comparison(
    tmp_path: Path, skill_dir: Path, plan: dict[str, Any], why: str
) -> None:
    ranking = load_ranking(write_ranking(tmp_path, [plan_candidate(**plan)]))
    resolved = resolve_candidate(ranking, "c1", tmp_path / "work")
    assert resolved.skill.content == ORIGINAL
    assert resolved.warnings == (
        f"execution plan of candidate 'c1' changed nothing: {why}; the comparison is void",
    )


def test_unsupported_action(tmp_path: Path, skill_dir: Path) -> None:
    ranking = load_ranking(write_ranking(tmp_path, [plan_candidate(action="rewrite_all")]))
    with pytest.raises(SkillError) as info:
        resolve_candidate(ranking, "c1", tmp_path / "work")
    message = str(info.value)
    assert (
        'scored_candidates[0] (id "c1").execution_plan.action: '
        "'rewrite_all' is not supported; supported actions: "
    ) in message
    assert all(action in message for action in SUPPORTED_ACTIONS)
    assert not (tmp_path / "work").exists() or not any((tmp_path / "work").iterdir())


def test_plan_on_another_file_of_the_skill(tmp_path: Path, skill_dir: Path) -> None:
    before = tree_digest(skill_dir)
    entry = {**plan_candidate(section_heading="## More"), "target_path": "references/guide.md"}
    ranking = load_ranking(write_ranking(tmp_path, [entry]))
    resolved = resolve_candidate(ranking, "c1", tmp_path / "work")
    assert resolved.skill.content == ORIGINAL
    directory = resolved.skill.directory
    assert directory is not None
    assert (directory / "references" / "guide.md").read_text() == (
        "# Guide\n\n## Tips\n\n## More\n\n- one\n- two\n"
    )
    assert "edits references/guide.md, not SKILL.md" in resolved.warnings[0]
    assert tree_digest(skill_dir) == before


def test_original_whose_frontmatter_is_not_a_mapping_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "SKILL.md").write_text("---\n- a\n---\nbody\n", encoding="utf-8")
    plan = {"action": "update_yaml_frontmatter", "frontmatter_updates": {"name": "x"}}
    ranking = load_ranking(write_ranking(tmp_path, [plan_candidate(**plan)], target={"path": "s"}))
    with pytest.raises(
        SkillError,
        match=r"s/SKILL.md:2: error: the frontmatter must be a "
        r"mapping .*\(target.path in .*ranking.json\)",
    ):
        resolve_candidate(ranking, "c1", tmp_path / "work")


def test_inline_candidate_without_frontmatter_names_candidate_and_line(
    tmp_path: Path, skill_dir: Path
) -> None:
    ranking = load_ranking(write_ranking(tmp_path, [{"id": "c1", "content": "# New\n"}]))
    with pytest.raises(SkillError) as info:
        resolve_candidate(ranking, "c1", tmp_path / "work")
    assert str(info.value) == (
        f'{tmp_path / "ranking.json"}: scored_candidates[0] (id "c1")'
        f".content, line 1: error: no YAML frontmatter: SKILL.md must "
        f"start with a '---' line, then name and description"
    )


@pytest.mark.parametrize(
    "target_path",
    [
        "/etc/passwd",
        "../demo-dir/SKILL.md",
        "references/../../x.md",
        "..\\x.md",
        "C:\\x.md",
        "link-out.md",
        "linkdir/SKILL.md",
        "abs-link.md",
        "missing.md",
        ".",
    ],
)
def test_target_path_cannot_leave_the_copy(
    tmp_path: Path, skill_dir: Path, target_path: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "SKILL.md").write_text("# Outside\n", encoding="utf-8")
    (skill_dir / "link-out.md").symlink_to("../../outside/SKILL.md")
    (skill_dir / "linkdir").symlink_to(outside)
    (skill_dir / "abs-link.md").symlink_to(skill_dir / "SKILL.md")
    before, outside_before = tree_digest(skill_dir), tree_digest(outside)
    entry = {**plan_candidate(), "target_path": target_path}
    ranking = load_ranking(write_ranking(tmp_path, [entry]))
    with pytest.raises(SkillError, match=r"\.target_path: "):
        resolve_candidate(ranking, "c1", tmp_path / "work")
    assert tree_digest(skill_dir) == before
    assert tree_digest(outside) == outside_before


@pytest.mark.parametrize(
    ("target", "written", "edited"),
    [
        ("skills/demo-dir", "{skill}/SKILL.md", "SKILL.md"),
        ("link", "{skill}/SKILL.md", "SKILL.md"),  # the discriminator resolves links
        ("link", "{link}/references/guide.md", "references/guide.md"),
        ("skills/demo-dir/SKILL.md", "{skill}/SKILL.md", "SKILL.md"),
    ],
)
def test_absolute_target_path_inside_the_original_is_accepted(
    tmp_path: Path, skill_dir: Path, target: str, written: str, edited: str
) -> None:
    """The original pipeline's discriminator writes every target_path absolute."""
    (tmp_path / "link").symlink_to(skill_dir)
    before = tree_digest(skill_dir)
    path = written.format(skill=skill_dir.resolve(), link=tmp_path / "link")
    entry = {**plan_candidate(section_heading="## Tips2"), "target_path": path}
    ranking = load_ranking(write_ranking(tmp_path, [entry], target={"path": target}))
    resolved = resolve_candidate(ranking, "c1", tmp_path / "work")
    assert resolved.skill.directory is not None
    text = (resolved.skill.directory / edited).read_text(encoding="utf-8")
    assert text.endswith("## Tips2\n\n- one\n- two\n")
    assert tree_digest(skill_dir) == before


@pytest.mark.parametrize(
    "written",
    [
        "{tmp}/skills/demo-dir-2/SKILL.md",
        "{tmp}/skills",
        "{skill}/../demo-dir-2/SKILL.md",
        "{skill}",
    ],
)
def test_absolute_target_path_outside_the_original_is_refused(
    tmp_path: Path, skill_dir: Path, written: str
) -> None:
    (tmp_path / "skills" / "demo-dir-2").mkdir()
    (tmp_path / "skills" / "demo-dir-2" / "SKILL.md").write_text(ORIGINAL, encoding="utf-8")
    path = written.format(tmp=tmp_path, skill=skill_dir)
    ranking = load_ranking(write_ranking(tmp_path, [{**plan_candidate(), "target_path": path}]))
    with pytest.raises(
        SkillError,
        match=r'\(id "c1"\)\.target_path: .*(outside the original '
        r"skill's folder|must name a file)",
    ):
        resolve_candidate(ranking, "c1", tmp_path / "work")


def test_unapplied_plan_names_actions_no_program_applies(tmp_path: Path, skill_dir: Path) -> None:
    entries = [
        plan_candidate("manual", action="unsupported_manual_refactor"),
        plan_candidate("typo", action="rewrite_all"),
        plan_candidate("ok"),
        {
            **plan_candidate("inline", action="unsupported_manual_refactor"),
            "content": md("# Inline\n"),
        },
        {"id": "no-action", "execution_plan": {"notes": "x"}},
        {"id": "unscored", "execution_plan": {"action": "unsupported_manual_x"}},
    ]
    ranking = load_ranking(write_ranking(tmp_path, entries))
    reason, score = unapplied_plan(ranking, "manual") or ("", None)
    assert reason.startswith(
        "scored_candidates[0].execution_plan.action "
        "'unsupported_manual_refactor' cannot be applied by a program"
    )
    assert score == 3.5
    assert unapplied_plan(ranking, "typo") is not None
    assert unapplied_plan(ranking, "unscored") == (
        "scored_candidates[5].execution_plan.action 'unsupported_manual_x' cannot be applied "
        f"by a program (skill-eval applies {', '.join(SUPPORTED_ACTIONS)}); the candidate was "
        "not evaluated",
        None,
    )
    for cid in ("ok", "inline", "no-action"):  # built, or a malformed plan: an error
        assert unapplied_plan(ranking, cid) is None
    with pytest.raises(SkillError, match="not found"):
        unapplied_plan(ranking, "nope")


@pytest.mark.parametrize("cid", ["../../escape", "/abs/id", "..", "a/../../b", "c 1\x00"])
def test_hostile_ids_stay_inside_work_dir(tmp_path: Path, skill_dir: Path, cid: str) -> None:
    ranking = load_ranking(
        write_ranking(tmp_path, [plan_candidate(cid), {"id": "x" + cid, "body": md("# B\n")}])
    )
    work = tmp_path / "deep" / "work"
    for candidate_id in (cid, "x" + cid):
        directory = resolve_candidate(ranking, candidate_id, work).skill.directory
        assert directory is not None and directory.is_relative_to(work.resolve())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep", "home", "ranking.json", "skills"]
    assert [p.name for p in (tmp_path / "deep").iterdir()] == ["work"]
    assert all(p.name.startswith("candidate-") for p in work.iterdir())


def test_each_resolution_gets_a_fresh_folder(tmp_path: Path, skill_dir: Path) -> None:
    ranking = load_ranking(write_ranking(tmp_path, [plan_candidate()]))
    first = resolve_candidate(ranking, "c1", tmp_path / "work").skill.directory
    second = resolve_candidate(ranking, "c1", tmp_path / "work").skill.directory
    assert first != second
    assert first is not None and (first / "SKILL.md").read_text().count("## Examples") == 1


def test_work_dir_inside_the_skill_is_not_copied_into_itself(
    tmp_path: Path, skill_dir: Path
) -> None:
    work = skill_dir / ".skill-eval-work"
    ranking = load_ranking(write_ranking(tmp_path, [plan_candidate()]))
    directory = resolve_candidate(ranking, "c1", work).skill.directory
    assert directory is not None
    assert not (directory / ".skill-eval-work").exists()
    assert (directory / "SKILL.md").read_text(encoding="utf-8").endswith("- two\n")


def test_crlf_original_keeps_crlf(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    head = b"---\r\nname: s\r\ndescription: d\r\n---\r\n"
    (tmp_path / "s" / "SKILL.md").write_bytes(head + b"# S\r\n\r\n## Usage\r\nold\r\n")
    plan = {
        "action": "replace_markdown_section",
        "section_heading": "## Usage",
        "content_lines": ["new"],
    }
    ranking = load_ranking(write_ranking(tmp_path, [plan_candidate(**plan)], target={"path": "s"}))
    directory = resolve_candidate(ranking, "c1", tmp_path / "work").skill.directory
    assert directory is not None
    assert (directory / "SKILL.md").read_bytes() == head + b"# S\r\n\r\n## Usage\r\n- new\r\n"
