"""Evaluator SKILL.md parsing and validation: every rule has a bad file."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from skill_eval.evaluators import (
    EvaluatorError,
    bundled_evaluators,
    load_evaluator,
    parse_evaluator,
    validate_evaluator_paths,
)

GOOD = """\
---
name: finance
kind: evaluator
description: Evaluates financial reports.
metadata:
  categories: [finance, reporting]
  dimensions:
    - name: accuracy
      weight: 0.5
      description: Are the numbers right?
    - name: compliance
      weight: 0.3
      description: Are the required disclosures there?
    - name: formatting
      weight: 0.2
      description: Is it laid out properly?
---
# Finance evaluator

Check the numbers.
"""


def write(tmp_path: Path, text: str, name: str = "finance") -> Path:
    path = tmp_path / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(text: str) -> list[str]:
    skill, problems = parse_evaluator(text, "ev/SKILL.md")
    assert skill is None
    return [str(p) for p in problems]


def test_good_file_loads(tmp_path: Path) -> None:
    skill = load_evaluator(write(tmp_path, GOOD), source="user")
    assert skill.name == "finance"
    assert skill.categories == ("finance", "reporting")
    assert [(d.name, d.weight) for d in skill.dimensions] == [
        ("accuracy", 0.5),
        ("compliance", 0.3),
        ("formatting", 0.2),
    ]
    assert skill.body.startswith("# Finance evaluator")
    assert skill.source == "user"
    assert skill.matches("FINANCE") and not skill.matches("code")
    assert skill.dimension("Accuracy") is skill.dimensions[0]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "weight: 0.2",
            "weight: 0.25",
            "ev/SKILL.md: metadata.dimensions: weights must sum to 1.0 (within 1e-06); "
            "0.5 + 0.3 + 0.25 = 1.05",
        ),
        (
            "name: formatting",
            "name: Accuracy",
            "ev/SKILL.md: metadata.dimensions[2].name: duplicate dimension name 'Accuracy' "
            "(also metadata.dimensions[0])",
        ),
        (
            "kind: evaluator",
            "kind: skill",
            "ev/SKILL.md: kind: must be 'evaluator' (this file is not an evaluator skill "
            "otherwise)",
        ),
        ("kind: evaluator\n", "", "ev/SKILL.md: kind: is required"),
        (
            "weight: 0.3",
            "weight: heavy",
            "ev/SKILL.md: metadata.dimensions[1].weight: must be a number greater than 0 and "
            "at most 1",
        ),
        (
            "weight: 0.3",
            "weight: 0",
            "ev/SKILL.md: metadata.dimensions[1].weight: must be a number greater than 0 and "
            "at most 1",
        ),
        (
            "      description: Are the numbers right?\n",
            "",
            "ev/SKILL.md: metadata.dimensions[0].description: is required",
        ),
        (
            "name: finance",
            "name: Finance Reports",
            "ev/SKILL.md: name: must be lowercase letters, digits and single hyphens (at most 64 "
            "characters), e.g. 'code-review'",
        ),
        (
            "description: Evaluates financial reports.",
            "description: ''",
            "ev/SKILL.md: description: must be a non-empty string of at most 1024 characters",
        ),
        (
            "categories: [finance, reporting]",
            "categories: [finance, Finance]",
            "ev/SKILL.md: metadata.categories[1]: duplicate category 'Finance' "
            "(categories match case-insensitively)",
        ),
        (
            "  categories: [finance, reporting]\n",
            "",
            "ev/SKILL.md: metadata.categories: is required",
        ),
        (
            "  dimensions:",
            "  dimensoins:",
            "ev/SKILL.md: metadata.dimensoins: unknown key 'dimensoins' (did you mean "
            "'dimensions'?); "
            "allowed: categories, dimensions",
        ),
        (
            "# Finance evaluator\n\nCheck the numbers.\n",
            "\n",
            "ev/SKILL.md: body: the Markdown rubric below the frontmatter is empty",
        ),
    ],
)
def test_each_rule_has_a_bad_file(old: str, new: str, expected: str) -> None:
    assert old in GOOD
    assert expected in problems_of(GOOD.replace(old, new))


def test_no_dimensions_is_an_error() -> None:
    start = GOOD.index("  dimensions:")
    text = GOOD[:start] + "  dimensions: []\n" + GOOD[GOOD.index("---\n#") :]
    assert problems_of(text) == [
        "ev/SKILL.md: metadata.dimensions: must be a non-empty list of dimensions, each with "
        "name, weight and description"
    ]


def test_float_rounding_within_tolerance_is_accepted() -> None:
    text = GOOD.replace("weight: 0.5", "weight: 0.1").replace(
        "    - name: compliance",
        "    - name: extra\n      weight: 0.4\n      description: x\n    - name: compliance",
    )
    skill, problems = parse_evaluator(text, "x")
    assert problems == [] and skill is not None  # 0.1 + 0.4 + 0.3 + 0.2 in floating point


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no frontmatter here\n", "ev/SKILL.md: frontmatter: must start with a YAML frontmatter"),
        ("---\nname: x\n", "ev/SKILL.md:1: frontmatter: is not closed (no line `---`)"),
        ("---\n- a list\n---\nbody\n", "ev/SKILL.md: frontmatter: must be a YAML mapping"),
        ("---\nname: [unclosed\n---\nbody\n", "ev/SKILL.md:2: frontmatter: invalid YAML"),
        (
            "---\na: !!python/object:os.system x\n---\nb\n",
            "ev/SKILL.md:2: frontmatter: invalid YAML",
        ),
    ],
)
def test_malformed_frontmatter_is_an_error_not_a_crash(text: str, expected: str) -> None:
    found = problems_of(text)
    assert len(found) == 1 and found[0].startswith(expected), found


def test_oversized_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + "x" * 300_000)
    with pytest.raises(EvaluatorError) as info:
        load_evaluator(path)
    assert "larger than" in str(info.value)
    assert str(path) in str(info.value)


def test_not_utf8_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes(b"---\nname: \xff\n---\n")
    _, problems = validate_evaluator_paths([path])
    assert [p.message for p in problems] == ["is not UTF-8 text"]


def test_validate_paths_walks_a_folder_of_evaluators(tmp_path: Path) -> None:
    write(tmp_path, GOOD, "finance")
    write(tmp_path, GOOD.replace("weight: 0.2", "weight: 0.3"), "broken")
    valid, problems = validate_evaluator_paths([tmp_path, tmp_path / "missing"])
    assert [s.name for s in valid] == ["finance"]
    assert [str(p) for p in problems] == [
        f"{tmp_path}/broken/SKILL.md: metadata.dimensions: weights must sum to 1.0 "
        "(within 1e-06); 0.5 + 0.3 + 0.3 = 1.1",
        f"{tmp_path}/missing: does not exist",
    ]


def test_the_bundled_six_validate() -> None:
    skills = {s.name: s for s in bundled_evaluators()}
    assert sorted(skills) == [
        "api-design",
        "code-review",
        "general",
        "prose-quality",
        "sql-safety",
        "test-quality",
    ]
    assert skills["general"].categories == ()
    assert skills["code-review"].categories == ("code", "refactor", "bugfix")
    assert {d.name: d.weight for d in skills["sql-safety"].dimensions} == {
        "correctness": 0.3,
        "safety": 0.3,
        "performance": 0.2,
        "reversibility": 0.2,
    }
    for skill in skills.values():
        assert skill.source == "bundled" and skill.body.strip()


def test_the_bundled_files_on_disk_validate() -> None:
    root = Path(__file__).resolve().parent.parent / "skill_eval" / "evaluators" / "bundled"
    valid, problems = validate_evaluator_paths([root])
    assert problems == [] and len(valid) == 6


def test_the_reference_example_validates() -> None:
    doc = Path(__file__).resolve().parent.parent / "references" / "evaluators.md"
    text = doc.read_text(encoding="utf-8")
    start = text.index("```markdown\n") + len("```markdown\n")
    example = text[start : text.index("\n```\n", start) + 1]
    skill, problems = parse_evaluator(example, "example")
    assert problems == [] and skill is not None
    assert skill.name == "changelog" and len(skill.dimensions) == 3


ALIAS_BOMB = "".join(
    [GOOD[: GOOD.index("metadata:")], "x-a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"]
    + [f"x-a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)]
    + [
        GOOD[GOOD.index("metadata:") :].replace(
            "categories: [finance, reporting]", "categories: [*a8, *a8]"
        )
    ]
)


def test_an_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    assert len(ALIAS_BOMB.encode()) < 2000  # 10^9 strings once expanded
    path = write(tmp_path, ALIAS_BOMB)
    started = time.monotonic()
    _, problems = validate_evaluator_paths([path])
    assert time.monotonic() - started < 30  # at once, even loaded; expanded it would take hours
    assert len(problems) == 1 and problems[0].field == "frontmatter"
    assert "alias bomb" in problems[0].message
    assert problems[0].line == 9  # x-a4, the first anchor past the node limit


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "---\nname: x\na: 1\nname: y\n---\nb\n",
            "ev/SKILL.md:4: name: invalid YAML: duplicate key 'name' (first defined at line 2)",
        ),
        (
            "---\ncategories: !!set {a}\n---\nb\n",
            "ev/SKILL.md:2: frontmatter: invalid YAML: unsupported tag '!!set'",
        ),
    ],
)
def test_yaml_problems_carry_the_files_lines(text: str, expected: str) -> None:
    found = problems_of(text)
    assert len(found) == 1 and found[0].startswith(expected), found


def test_a_byte_order_mark_before_the_frontmatter_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode("utf-8"))
    skill = load_evaluator(path)
    assert skill.name == "finance"
    assert parse_evaluator("\ufeff" + GOOD, "x")[1] == []
