"""Execution-plan text transforms: exact resulting text for each action, changed or not."""

from __future__ import annotations

from typing import Any

import pytest

from skill_eval.errors import SkillError
from skill_eval.skills.plans import SUPPORTED_ACTIONS, apply_plan, plan_problems, read_frontmatter

DOC = "# Title\n\nIntro.\n\n## Usage\n\n- old\n\n### Detail\n\nd\n\n## Other\n\no\n"
FENCED = "# T\n\n```md\n## Usage\nnot a heading\n```\n\n## Usage\n\nreal\n"


def plan(
    action: str, heading: str = "## Usage", lines: list[str] | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "action": action,
        "section_heading": heading,
        "content_lines": ["a", "b"] if lines is None else lines,
        **extra,
    }


APPEND = "append_markdown_section"
REPLACE = "replace_markdown_section"
INSERT = "insert_before_section"

CASES = [
    # (id, text, plan, expected text or None for unchanged)
    ("append", "# T\n\nintro\n", plan(APPEND), "# T\n\nintro\n\n## Usage\n\n- a\n- b\n"),
    (
        "append-no-trailing-newline",
        "# T\nintro",
        plan(APPEND, lines=["a"]),
        "# T\nintro\n\n## Usage\n\n- a\n",
    ),
    (
        "append-trailing-blank-lines",
        "# T\n\n\n",
        plan(APPEND, lines=["a"]),
        "# T\n\n## Usage\n\n- a\n",
    ),
    ("append-empty-file", "", plan(APPEND, lines=["a"]), "## Usage\n\n- a\n"),
    (
        "append-bullets-always",
        "# T\n",
        plan(APPEND, lines=["- a", "# b"]),
        "# T\n\n## Usage\n\n- - a\n- # b\n",
    ),
    ("append-no-lines", "# T\n", plan(APPEND, lines=[]), "# T\n\n## Usage\n"),
    (
        "append-heading-without-hashes",
        "# T\n",
        plan(APPEND, heading="Usage", lines=["a"]),
        "# T\n\n## Usage\n\n- a\n",
    ),
    (
        "append-lenient-hashes",
        "# T\n",
        plan(APPEND, heading="###Usage ", lines=["a"]),
        "# T\n\n### Usage\n\n- a\n",
    ),
    (
        "append-crlf",
        "# T\r\nintro\r\n",
        plan(APPEND, lines=["a"]),
        "# T\r\nintro\r\n\r\n## Usage\r\n\r\n- a\r\n",
    ),
    ("append-present", DOC, plan(APPEND), None),
    ("append-present-other-level", "# T\n\n### Usage\n", plan(APPEND), None),
    (
        "append-only-in-fence",
        "# T\n\n```\n## Usage\n```\n",
        plan(APPEND, lines=["a"]),
        "# T\n\n```\n## Usage\n```\n\n## Usage\n\n- a\n",
    ),
    (
        "append-only-in-frontmatter",
        "---\n# Usage\n---\nbody\n",
        plan(APPEND, heading="# Usage", lines=["a"]),
        "---\n# Usage\n---\nbody\n\n# Usage\n\n- a\n",
    ),
    (
        "replace",
        DOC,
        plan(REPLACE, lines=["new", "- kept"]),
        "# Title\n\nIntro.\n\n## Usage\n- new\n- kept\n\n## Other\n\no\n",
    ),
    (
        "replace-last-section",
        DOC,
        plan(REPLACE, heading="## Other", lines=["x"]),
        DOC.replace("## Other\n\no\n", "## Other\n- x\n"),
    ),
    (
        "replace-subsection-stops-at-higher",
        DOC,
        plan(REPLACE, heading="### Detail", lines=["x"]),
        DOC.replace("### Detail\n\nd\n\n", "### Detail\n- x\n\n"),
    ),
    (
        "replace-heading-without-hashes",
        DOC,
        plan(REPLACE, heading="Other", lines=["x"]),
        DOC.replace("## Other\n\no\n", "## Other\n- x\n"),
    ),
    (
        "replace-closing-hashes",
        "# T\n\n## Usage ##\nold\n",
        plan(REPLACE, lines=["x"]),
        "# T\n\n## Usage ##\n- x\n",
    ),
    ("replace-no-trailing-newline", "## Usage\nold", plan(REPLACE, lines=["x"]), "## Usage\n- x\n"),
    (
        "replace-skips-fenced",
        FENCED,
        plan(REPLACE, lines=["x"]),
        FENCED.replace("## Usage\n\nreal\n", "## Usage\n- x\n"),
    ),
    (
        "replace-fence-body-not-a-section-end",
        "## Usage\n```\n## Fake\n```\n## Next\n",
        plan(REPLACE, lines=["x"]),
        "## Usage\n- x\n\n## Next\n",
    ),
    (
        "replace-crlf",
        "## Usage\r\nold\r\n\r\n## Next\r\n",
        plan(REPLACE, lines=["x"]),
        "## Usage\r\n- x\r\n\r\n## Next\r\n",
    ),
    ("replace-not-found", DOC, plan(REPLACE, heading="## Missing"), None),
    ("replace-wrong-level", DOC, plan(REPLACE, heading="### Usage"), None),
    ("replace-same-content", "## Usage\n- a\n- b\n", plan(REPLACE), None),
    (
        "insert",
        DOC,
        plan(INSERT, heading="## Other", lines=["x", "- y", "## New"]),
        DOC.replace("## Other\n", "- x\n- y\n## New\n\n## Other\n"),
    ),
    (
        "insert-before-first-line",
        "## Usage\nu\n",
        plan(INSERT, lines=["x"]),
        "- x\n\n## Usage\nu\n",
    ),
    (
        "insert-crlf",
        "# T\r\n## Usage\r\n",
        plan(INSERT, lines=["x"]),
        "# T\r\n- x\r\n\r\n## Usage\r\n",
    ),
    (
        "insert-skips-fenced",
        FENCED,
        plan(INSERT, lines=["x"]),
        FENCED.replace("\n## Usage\n\nreal", "\n- x\n\n## Usage\n\nreal"),
    ),
    ("insert-not-found", DOC, plan(INSERT, heading="## Missing"), None),
    ("insert-already-present", "- a\n- b\n\n## Usage\n", plan(INSERT), None),
    ("insert-no-lines", DOC, plan(INSERT, lines=[]), None),
]


@pytest.mark.parametrize(
    ("text", "the_plan", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_markdown_actions(text: str, the_plan: dict[str, Any], expected: str | None) -> None:
    outcome = apply_plan(text, the_plan)
    if expected is None:
        assert outcome.text == text
        assert not outcome.changed
    else:
        assert outcome.text == expected
        assert outcome.changed
    assert outcome.note


def test_notes_say_why_nothing_changed() -> None:
    assert "not found" in apply_plan(DOC, plan(REPLACE, heading="## Missing")).note
    assert "already present" in apply_plan(DOC, plan(APPEND)).note


def fm_plan(updates: Any) -> dict[str, Any]:
    return {"action": "update_yaml_frontmatter", "frontmatter_updates": updates}


BODY = "# Skill\n\n  body kept   byte for byte\n\n"

FRONTMATTER_CASES = [
    (
        "merge-keeps-order",
        "---\nname: s\ndescription: old\n---\n" + BODY,
        {"description": "new", "version": 2},
        "---\nname: s\ndescription: new\nversion: 2\n---\n" + BODY,
    ),
    ("create-when-absent", BODY, {"name": "s"}, "---\nname: s\n---\n" + BODY),
    ("empty-frontmatter", "---\n---\n" + BODY, {"name": "s"}, "---\nname: s\n---\n" + BODY),
    (
        "crlf",
        "---\r\nname: s\r\n---\r\nbody\r\n",
        {"x": "y"},
        "---\r\nname: s\r\nx: y\r\n---\r\nbody\r\n",
    ),
    (
        "unicode",
        "---\nname: s\n---\nb\n",
        {"description": "café"},
        "---\nname: s\ndescription: café\n---\nb\n",
    ),
    ("bom-kept", "\ufeff---\nname: s\n---\nb\n", {"x": 1}, "\ufeff---\nname: s\nx: 1\n---\nb\n"),
    ("same-values", "---\nname: s\n# comment kept\n---\nb\n", {"name": "s"}, None),
    ("no-updates-no-frontmatter", BODY, {}, None),
]


@pytest.mark.parametrize(
    ("text", "updates", "expected"),
    [c[1:] for c in FRONTMATTER_CASES],
    ids=[c[0] for c in FRONTMATTER_CASES],
)
def test_update_yaml_frontmatter(text: str, updates: dict[str, Any], expected: str | None) -> None:
    outcome = apply_plan(text, fm_plan(updates))
    assert outcome.text == (text if expected is None else expected)
    assert outcome.changed is (expected is not None)


@pytest.mark.parametrize(
    "text",
    [
        "---\n- a\n- b\n---\nbody\n",
        "---\njust text\n---\n",
        "---\nfalse\n---\n",
        "---\nkey: [unclosed\n---\n",
        "---\nname: s\nno end\n",
    ],
)
def test_frontmatter_that_is_not_a_mapping_is_an_error(text: str) -> None:
    with pytest.raises(SkillError, match="frontmatter"):
        apply_plan(text, fm_plan({"name": "x"}))


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"action": "delete_everything"}, "execution_plan.action"),
        ({}, "execution_plan.action"),
        ({"action": APPEND, "content_lines": ["a"]}, "execution_plan.section_heading"),
        (
            {"action": APPEND, "section_heading": "##", "content_lines": []},
            "execution_plan.section_heading",
        ),
        (
            {"action": APPEND, "section_heading": "## A\n## B", "content_lines": []},
            "execution_plan.section_heading",
        ),
        (
            {"action": REPLACE, "section_heading": "## A", "content_lines": "a"},
            "execution_plan.content_lines",
        ),
        (
            {"action": INSERT, "section_heading": "## A", "content_lines": [1]},
            "execution_plan.content_lines",
        ),
        (
            {"action": "update_yaml_frontmatter", "frontmatter_updates": ["a"]},
            "execution_plan.frontmatter_updates",
        ),
        ("not a mapping", "execution_plan"),
    ],
)
def test_malformed_plans_name_the_field(bad: Any, field: str) -> None:
    assert field in [f for f, _ in plan_problems(bad)]
    with pytest.raises(SkillError, match=field):
        apply_plan("# T\n", bad)


def test_unsupported_action_lists_the_supported_ones() -> None:
    with pytest.raises(SkillError) as info:
        apply_plan("# T\n", {"action": "delete_everything"})
    assert "'delete_everything' is not supported" in str(info.value)
    for action in SUPPORTED_ACTIONS:
        assert action in str(info.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\nname: s\n---\nb", {"name": "s"}),
        ("no frontmatter", None),
        ("---\n[1, 2]\n---\n", None),
        ("---\nbad: [\n---\n", None),
        ("---\nname: s\n", None),
    ],
)
def test_read_frontmatter(text: str, expected: dict[str, Any] | None) -> None:
    assert read_frontmatter(text) == expected
