"""The Agent Skills format checks: `skill-eval lint` on shapes of real public skills built in
tmp_path, the checks one by one, and what `skill-eval run` does with errors and warnings."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.errors import SkillError
from skill_eval.skills import lint_skill, load_skill
from skill_eval.skills.lint import lint_text, name_problems

from .helpers import DEMO_SKILL, DEMO_SKILL_IMPROVED, DEMO_SUITE, read_json, run_cli


def write(folder: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def front(name: str, description: str, extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n"


def findings(folder: Path) -> list[str]:
    """Findings with the folder's path cut off: `SKILL.md:3: warning: ...`."""
    return [str(f).replace(f"{folder}/", "") for f in lint_skill(folder)]


# Shapes of public skills (anthropics/skills), rebuilt small


def test_claude_api_like_skill_warns_only_of_its_long_description(tmp_path: Path) -> None:
    description = ("Build apps with the Claude API or Anthropic SDK. " * 22)[:1068]
    body = ["# Claude API", "", "Read the guide for your language:", ""]
    files: dict[str, str] = {}
    for lang in ("python", "typescript", "java", "go", "ruby", "csharp", "php", "curl"):
        for part in (
            "README.md",
            "streaming.md",
            "tool-use.md",
            "batches.md",
            "files-api.md",
            "errors.md",
            "models.md",
            "thinking.md",
        ):
            files[f"{lang}/claude-api/{part}"] = f"# {lang} {part}\n"
        body.append(f"- {lang}: [{lang}/claude-api/README.md]({lang}/claude-api/README.md)")
    files["shared/models.md"] = "# models\n"
    files["shared/pricing.md"] = "# pricing\n"
    body.append("Model names are in `shared/models.md`.")
    folder = write(
        tmp_path / "claude-api",
        {
            "SKILL.md": front(
                "claude-api", f'"{description}"', "license: Complete terms in LICENSE.txt\n"
            )
            + "\n".join(body)
            + "\n",
            **files,
        },
    )
    assert len(files) + 1 == 67
    assert findings(folder) == [
        "SKILL.md:3: warning: `description` is 1068 characters; the format allows 1024; "
        "Codex CLI lists it cut to its first 1,021 characters and '...' (OpenCode and Claude "
        "Code send it whole): the rest never reaches Codex's model"
    ]
    code, out, _ = run_cli("lint", str(folder))
    assert code == 0 and out.count("warning") == 1


def test_pdf_like_skill_with_scripts_and_reference_links_is_clean(tmp_path: Path) -> None:
    skill = front(
        "pdf",
        "Work with PDF files, extract text, fill forms, merge.",
        "license: Proprietary. LICENSE.txt has complete terms\n",
    ) + (
        "# PDF processing\n\n"
        "For advanced features see [reference.md](reference.md); to fill a form, read "
        "[forms.md](forms.md#filling) first.\n\n"
        "Check the fields with `scripts/check_fillable_fields.py`, then run:\n\n"
        "```bash\npython scripts/fill_fillable_fields.py input.pdf fields.json out.pdf\n```\n\n"
        "Write the result to `output.pdf` ([pypdf docs](https://pypdf.readthedocs.io)).\n"
    )
    folder = write(
        tmp_path / "pdf",
        {
            "SKILL.md": skill,
            "reference.md": "# Reference\n",
            "forms.md": "# Forms\n",
            "LICENSE.txt": "terms\n",
            "scripts/check_fillable_fields.py": "print()\n",
            "scripts/fill_fillable_fields.py": "print()\n",
        },
    )
    assert findings(folder) == []
    assert run_cli("lint", str(folder))[:2] == (0, f"{folder}: ok\n")  # one line, not silence


def test_a_file_named_in_another_letter_case_is_a_warning(tmp_path: Path) -> None:
    # anthropics/skills' pdf: its prose says "see REFERENCE.md" and "read FORMS.md", and its
    # files are reference.md and forms.md: found on macOS, not found on Linux.
    skill = front("pdf", "Work with PDF files.") + (
        "# PDF\n\n"
        "For advanced features, see REFERENCE.md. To fill a form, read FORMS.md.\n"
        "Run `scripts/Fill.py` and read [the guide](Guide.md).\n"
        "Follow the instructions in Forms.md (see reference.md, which is right).\n"
        "Name the report out.md; see README.md; see notes.md.\n"
        "```\ncat REFERENCE.MD\n```\n"
    )
    folder = write(
        tmp_path / "pdf",
        {
            "SKILL.md": skill,
            "reference.md": "# Reference\n",
            "forms.md": "# Forms\n",
            "guide.md": "# Guide\n",
            "scripts/fill.py": "print()\n",
        },
    )
    slip = ": file names are case-sensitive on Linux, where the agent will not find it"
    assert findings(folder) == [
        f"SKILL.md:7: warning: names 'REFERENCE.md', but the file is 'reference.md'{slip}",
        f"SKILL.md:7: warning: names 'FORMS.md', but the file is 'forms.md'{slip}",
        f"SKILL.md:8: warning: names 'Guide.md', but the file is 'guide.md'{slip}",
        f"SKILL.md:8: warning: names 'scripts/Fill.py', but the file is 'scripts/fill.py'{slip}",
        # named in passing (no "see"), yet a file of the skill by another case
        f"SKILL.md:9: warning: names 'Forms.md', but the file is 'forms.md'{slip}",
        "SKILL.md:10: warning: links to 'notes.md', which the skill folder lacks",
    ]
    code, out, _ = run_cli("lint", str(folder))
    assert code == 0 and out.count("\n") == 6


def test_missing_linked_files_are_warnings_at_their_lines(tmp_path: Path) -> None:
    folder = write(
        tmp_path / "docx",
        {
            "SKILL.md": front("docx", "Edit Word documents.")
            + (
                "# DOCX\n\n"
                "Read [the OOXML guide](ooxml.md) before editing.\n"
                "Unpack with `scripts/unpack.py`, see `reference.md` and [up](../other/x.md).\n"
                "Name the result `notes.md` (like `tool-use.md`).\n"
                "Mention `output.docx`, `main.py`, `src/app.ts`, `README.md` and `some value` "
                "freely.\n"
            ),
            "scripts/pack.py": "print()\n",
        },
    )
    assert findings(folder) == [
        "SKILL.md:7: warning: links to 'ooxml.md', which the skill folder lacks",
        "SKILL.md:8: warning: links to '../other/x.md', outside the skill folder: an "
        "installed skill cannot reach it",
        "SKILL.md:8: warning: links to 'scripts/unpack.py', which the skill folder lacks",
        "SKILL.md:8: warning: links to 'reference.md', which the skill folder lacks",
    ]
    code, out, _ = run_cli("lint", str(folder))
    assert code == 0 and out.count("\n") == 4
    assert out.startswith(f"{folder}/SKILL.md:7: warning: links to 'ooxml.md'")


def test_a_skill_md_that_is_not_utf8_is_a_lint_error_at_its_line(tmp_path: Path) -> None:
    # Saved as Latin-1 (an editor's default): a finding, exit 1 like any error, not exit 2.
    folder = tmp_path / "latin"
    folder.mkdir()
    (folder / "SKILL.md").write_bytes(b"---\nname: latin\ndescription: Caf\xe9 menus\n---\n")
    other = write(tmp_path / "fine", {"SKILL.md": front("fine", "Fine.")})
    code, out, err = run_cli("lint", str(folder), str(other))
    assert (code, err) == (1, "")
    assert out == (
        f"{folder}/SKILL.md:3: error: SKILL.md is not valid UTF-8 (byte 0xe9 at offset 32); "
        f"save the file as UTF-8\n{other}: ok\n"
    )
    # a run refuses it, naming the file, with the same words
    with pytest.raises(SkillError, match="SKILL.md is not valid UTF-8 .byte 0xe9"):
        load_skill(folder)


def test_broken_yaml_is_an_error_at_its_line(tmp_path: Path) -> None:
    folder = write(
        tmp_path / "xlsx",
        {"SKILL.md": "---\nname: xlsx\ndescription: Spreadsheets: formulas: charts\n---\n# XLSX\n"},
    )
    lines = findings(folder)
    assert len(lines) == 1 and lines[0].startswith(
        "SKILL.md:3: error: the frontmatter is not valid YAML: "
    )
    code, out, _ = run_cli("lint", str(folder))
    assert code == 1 and out.startswith(f"{folder}/SKILL.md:3: error:")


# The checks one by one


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ["1: error: SKILL.md is empty"]),
        ("  \n\n", ["1: error: SKILL.md is empty"]),
        (
            "# Title\n\nbody\n",
            [
                "1: error: no YAML frontmatter: SKILL.md must start with a '---' "
                "line, then name and description"
            ],
        ),
        (
            "---\nname: s\ndescription: d\n# no end\n",
            ["1: error: the YAML frontmatter has no closing '---' line"],
        ),
        (
            "---\n- a\n---\n",
            ["2: error: the frontmatter must be a mapping of keys to values, not a list"],
        ),
        ("---\ndescription: d\n---\n", ["1: error: the frontmatter has no `name`"]),
        ("---\nname: s\n---\n", ["1: error: the frontmatter has no `description`"]),
        ("---\nname: s\ndescription: ''\n---\n", ["3: error: `description` is empty"]),
        ("---\nname: '  '\ndescription: d\n---\n", ["2: error: `name` is empty"]),
        ("---\nname: [a]\ndescription: d\n---\n", ["2: error: `name` must be a string"]),
        ("---\nname: s\nname: t\ndescription: d\n---\n", None),
        (
            "---\nname: s\ndescription: d\nversion: 1\nwhen_to_use: x\nmetadata: {a: b}\n---\n",
            [
                "4: warning: unknown frontmatter key `version` (the format knows name, "
                "description, "
                "license, compatibility, metadata, allowed-tools; Claude Code also reads "
                "when_to_use, "
                "argument-hint, arguments, disable-model-invocation, user-invocable, model, "
                "effort, "
                "context, agent, hooks, paths, shell)",
                "5: warning: only Claude Code reads `when_to_use`: OpenCode and Codex CLI never "
                "show it to their model, so there the skill is chosen on its `description` "
                "alone; put what decides when to use it in `description`",
            ],
        ),
        (
            "---\nname: s\ndescription: d\ndisable-model-invocation: true\n---\n",
            [
                "4: warning: `disable-model-invocation: true`: Claude Code's model never loads "
                "this skill by itself (only a user's /command does); OpenCode and Codex CLI "
                "ignore the key and list the skill like any other, so their models may load it"
            ],
        ),
        ("\ufeff---\nname: s\ndescription: d\n---\nbody\n", []),
    ],
)
def test_findings(text: str, expected: list[str] | None) -> None:
    found = [f"{f.line}: {f.severity}: {f.message}" for f in lint_text(text, "S", None)]
    if expected is None:  # duplicate keys: one error at the second key's line
        assert found == [
            "3: error: the frontmatter is not valid YAML: duplicate key 'name' "
            "(first defined at line 2)"
        ]
    else:
        assert found == expected


def test_body_over_500_lines_is_a_warning_at_line_501_of_the_body() -> None:
    text = "---\nname: s\ndescription: d\n---\n" + "line\n" * 501 + "\n\n"
    assert [str(f) for f in lint_text(text, "S", None)] == [
        "S:505: warning: the body is 501 lines; keep SKILL.md under 500 lines and move "
        "detail into files it links to"
    ]
    assert lint_text("---\nname: s\ndescription: d\n---\n" + "line\n" * 500, "S", None) == []


@pytest.mark.parametrize(
    ("name", "folder", "problems"),
    [
        ("pdf", "pdf", 0),
        ("a1-b2", "a1-b2", 0),
        ("x" * 64, "x" * 64, 0),
        ("x" * 65, "x" * 65, 1),
        ("PDF", "PDF", 1),
        ("-pdf", "-pdf", 1),
        ("pdf-", "pdf-", 1),
        ("a--b", "a--b", 1),
        ("a_b", "a_b", 1),
        ("pdf", "pdf-skill", 1),
        ("My Skill", "x", 2),
    ],
)
def test_name_rules(name: str, folder: str, problems: int) -> None:
    assert len(name_problems(name, folder)) == problems


def test_the_demo_fixtures_are_clean(tmp_path: Path) -> None:
    assert lint_skill(DEMO_SKILL) == [] and lint_skill(DEMO_SKILL_IMPROVED) == []


# What a run does with them


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("", 1, "SKILL.md is empty"),
        ("# Only a title\n", 1, "no YAML frontmatter"),
        ("---\nname: s\ndescription: a: b\n---\n", 3, "the frontmatter is not valid YAML"),
        ("---\ndescription: d\n---\n", 1, "the frontmatter has no `name`"),
        ("---\nname: s\ndescription:\n---\n", 3, "`description` must be a string"),
    ],
)
def test_run_refuses_a_broken_skill_with_exit_2_naming_file_and_line(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "SKILL.md").write_text(text, encoding="utf-8")
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--skill-path",
        str(tmp_path / "s"),
        "--task-suite",
        str(DEMO_SUITE),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "-q",
    )
    assert code == 2 and out == ""
    assert err.startswith(f"Error: {tmp_path / 's' / 'SKILL.md'}:{line}: error: {message}")
    assert not (tmp_path / "state" / "evaluations").exists()


def test_run_logs_warnings_and_records_them_in_the_artifact(tmp_path: Path) -> None:
    folder = write(
        tmp_path / "notes",
        {
            "SKILL.md": front("notes", "Take notes.", "version: 2\n")
            + "# Notes\n\nSee [guide](guide.md).\n"
        },
    )
    code, out, err = run_cli(
        "run",
        "--standalone",
        "--skill-path",
        str(folder),
        "--task-suite",
        str(DEMO_SUITE),
        "--state-root",
        str(tmp_path / "state"),
        "--mock",
        "-q",
    )
    assert code in (0, 1, 3, 4), err
    expected = [
        f"candidate skill: {folder}/SKILL.md:4: warning: unknown frontmatter key `version`",
        f"candidate skill: {folder}/SKILL.md:8: warning: links to "
        f"'guide.md', which the skill folder lacks",
    ]
    warnings = read_json(out.strip())["warnings"]
    for item in expected:
        assert sum(w.startswith(item) for w in warnings) == 1, warnings
        assert f"warning: {item}" in err
