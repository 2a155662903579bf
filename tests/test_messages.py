"""What a skill author reads when something is off (issue 26, "Messages"), through the real
CLI: a judge-type typo gets a hint, a YAML syntax error names the line where it starts (suites
and --mock-outputs files), `import` prints the run command for what it wrote (and
references/interop.md's recipe runs), a trigger-only suite has no SKILL.md-alone warning and
every report tells two same-named arms apart, and `show` gives a failed pytest judgement's
first failing assertion."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from skill_eval.core.safeyaml import YamlError, load_yaml_text
from skill_eval.report.html import render_html
from skill_eval.report.render import md_escape, render_junit, render_markdown, render_table
from tests.helpers import REPO, read_json, run_cli, write_outputs, write_skill, write_suite

HEAD = 'skill_id: s\nversion: "1.0"\ntasks:\n'


def _validate(tmp_path: Path, text: str, *extra: str) -> tuple[int, str]:
    path = tmp_path / "task_suite.yaml"
    path.write_text(text, encoding="utf-8")
    code, _, err = run_cli("validate", str(path), *extra)
    return code, err.replace(str(tmp_path), "S")


# --- a judge-type typo ------------------------------------------------------------------------


def test_a_misspelt_judge_type_gets_did_you_mean(tmp_path: Path) -> None:
    code, err = _validate(
        tmp_path,
        HEAD + "  - id: a\n    prompt: p\n    judge:\n      type: contians\n      expected: [x]\n",
    )
    assert code == 2
    assert err.startswith(
        'S/task_suite.yaml:7: tasks[0] (id "a").judge.type: unknown judge '
        "type 'contians' (did you mean 'contains'?); valid types: all, any"
    )
    # nested judges too, and a name like nothing gets no guess
    code, err = _validate(
        tmp_path,
        HEAD + "  - id: a\n    prompt: p\n    judge:\n"
        "      type: all\n      judges:\n"
        "        - {type: not-contain, expected: [x]}\n"
        "        - {type: zzzzzz, expected: [x]}\n",
    )
    assert (
        "judge.judges[0].type: unknown judge type 'not-contain' (did you mean "
        "'not-contains'?)" in err
    )
    assert "unknown judge type 'zzzzzz'; valid types:" in err


# --- typos of a command or a flag value -------------------------------------------------------


def test_a_misspelt_command_or_flag_value_gets_did_you_mean(tmp_path: Path) -> None:
    code, _, err = run_cli("rn")
    assert code == 2 and err.endswith("Error: No such command 'rn' (did you mean 'run'?).\n")
    code, _, err = run_cli("zzzz")  # nothing close: no guess
    assert code == 2 and err.endswith("Error: No such command 'zzzz'.\n")
    code, _, err = run_cli("run", "--policy", "no-regresion")
    assert code == 2 and err.endswith(
        "Error: Invalid value for '--policy': 'no-regresion' is not one of 'delta', "
        "'no-regression', 'non-inferior', 'superior' (did you mean 'no-regression'?)\n"
    )
    code, _, err = run_cli("report", str(tmp_path / "a.json"), "--format", "mardown")
    assert code == 2 and "(did you mean 'markdown'?)" in err
    code, _, err = run_cli("run", "--executor", "mok")  # registry-backed values too
    assert code == 2 and "(did you mean 'mock'?)" in err


def test_every_closed_set_flag_uses_the_choice_that_suggests() -> None:
    import click

    from skill_eval.cli import COMMANDS, cli
    from skill_eval.cli.choices import Choice

    def commands(group: click.Command, ctx: click.Context) -> list[click.Command]:
        if not isinstance(group, click.Group):
            return [group]
        found = [group]
        for name in group.list_commands(ctx):
            sub = group.get_command(ctx, name)
            assert sub is not None, name
            found += commands(sub, ctx)
        return found

    every = commands(cli, click.Context(cli))
    assert len(every) > len(COMMANDS)
    closed = [(c.name, p.name) for c in every for p in c.params if isinstance(p.type, click.Choice)]
    assert ("run", "policy") in closed and ("report", "fmt") in closed
    plain = [
        (c.name, p.name)
        for c in every
        for p in c.params
        if isinstance(p.type, click.Choice) and not isinstance(p.type, Choice)
    ]
    assert plain == []


# --- YAML syntax errors where they start --------------------------------------------------------

UNCLOSED_AT_5 = (
    HEAD + '  - id: a\n    prompt: "hello\n    judge: {type: contains, '
    "expected: [x]}\n  - id: b\n    prompt: hi\n    judge: {type: contains, expected: [y]}\n"
)
# the same quote closed by the next quote in the file: the parser trips three lines later
CLOSED_LATER = (
    HEAD + '  - id: a\n    prompt: "hello\n    judge:\n      type: contains\n'
    '      expected: ["x"]\n'
)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (
            UNCLOSED_AT_5,
            5,
            "found unexpected end of stream at line 10 (a closing quote is missing)",
        ),
        (CLOSED_LATER, 5, "a quoted string opens here and runs to line 8"),
        # a bad indent is reported where it is, not at the mapping it breaks (line 1)
        (
            'skill_id: s\nversion: "1.0"\n  tasks: []\n',
            3,
            "(while parsing a block mapping that starts at line 1)",
        ),
        (
            HEAD + "  - id: a\n    prompt\n    judge: {type: contains, expected: [x]}\n",
            5,
            "could not find expected ':' at line 6",
        ),
        ('skill_id: s\nversion: "1.0"\ntasks: [\n  {id: a}\nx: 1\n', 3, "flow sequence"),
    ],
)
def test_a_yaml_syntax_error_names_the_line_where_it_starts(
    tmp_path: Path, text: str, line: int, words: str
) -> None:
    code, err = _validate(tmp_path, text)
    assert code == 2
    [shown] = err.strip().splitlines()
    assert shown.startswith(f"S/task_suite.yaml:{line}: YAML syntax error (column "), shown
    assert words in shown


def test_the_quote_check_only_blames_a_quote_that_spans_lines() -> None:
    # the string on line 2 is closed on its own line; the error on line 3 is its own
    with pytest.raises(YamlError) as caught:
        load_yaml_text('a: "x"\nb: "y"\n  c: 1\n', "f.yaml")
    [problem] = caught.value.problems
    assert problem.line == 3 and "quoted string" not in problem.message


@pytest.mark.parametrize(
    ("name", "text", "line", "words"),
    [
        ("o.yaml", 'a: "alpha\nb: beta\nc: gamma\n', 1, "a closing quote is missing"),
        ("o.yaml", 'a: "alpha\nb: "beta"\n', 1, "a quoted string opens here and runs to line 2"),
        ("o.json", '{"a": "alpha",\n "b" "beta"}\n', 2, "Expecting ':' delimiter"),
    ],
)
def test_a_mock_outputs_syntax_error_names_its_line(
    tmp_path: Path, name: str, text: str, line: int, words: str
) -> None:
    suite = write_suite(
        tmp_path / "suite",
        [{"id": "a", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}}],
    )
    outputs = tmp_path / name
    outputs.write_text(text, encoding="utf-8")
    code, _, err = run_cli("validate", str(suite), "--mock-outputs", str(outputs))
    assert code == 2
    assert err.startswith(f"{outputs}:{line}: cannot read mock outputs: "), err
    assert words in err
    code, _, err = run_cli(
        "run",
        "--task-suite",
        str(suite),
        "--standalone",
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--mock",
        "--state-root",
        str(tmp_path / "state"),
        "--mock-outputs",
        str(outputs),
    )
    assert code == 2 and f"Error: {outputs}:{line}: cannot read mock outputs: " in err
    assert words in err and "Traceback" not in err


# --- import prints the command; the interop recipe runs -------------------------------------------


def _skill_with_evals(root: Path) -> Path:
    skill = write_skill(root / "my-skill", name="my-skill")
    (skill / "evals").mkdir()
    (skill / "evals" / "evals.json").write_text(
        json.dumps(
            {
                "skill_name": "my-skill",
                "evals": [{"id": 1, "prompt": "Make a report", "expectations": ["It has totals"]}],
            }
        ),
        encoding="utf-8",
    )
    return skill


def _run_line(err: str) -> list[str]:
    """The dry-run command import printed, as argv; the real one must be it without --mock."""
    dry, real = [
        shlex.split(ln) for ln in err.splitlines() if ln.strip().startswith("skill-eval run")
    ]
    assert dry == [*real, "--mock"], err
    assert err.index("--mock: a dry run") < err.index("then for real (calls the model)")
    return dry


def test_import_prints_the_run_command_for_what_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _skill_with_evals(tmp_path)
    code, out, err = run_cli("import", "my-skill/evals/evals.json", "-o", "suites/a/")
    assert code == 0, err
    argv = _run_line(err)
    assert argv == [
        "skill-eval",
        "run",
        "--task-suite",
        "suites/a/task_suite.yaml",
        "--standalone",
        "--skill-path",
        "my-skill",
        "--state-root",
        ".skill-eval",
        "--mock",
    ]
    code, out, err = run_cli(*argv[1:])  # exactly as printed: offline
    assert code in (0, 1, 4), err  # a verdict (one task, both arms pass: not a lift)
    assert read_json(out.strip())["candidate_results"][0]["task_id"] == "eval-1"

    Path("trigger_eval.json").write_text(
        json.dumps(
            [
                {"query": "make me a report", "should_trigger": True},
                {"query": "what is the weather", "should_trigger": False},
            ]
        ),
        encoding="utf-8",
    )
    code, _, err = run_cli(
        "import",
        "my-skill/evals/evals.json",
        "--trigger-set",
        "trigger_eval.json",
        "-o",
        "suites/b/",
    )
    assert code == 0, err
    argv = _run_line(err)
    assert argv[argv.index("--baseline-skill") + 1] == "OTHER_VERSION"
    assert "OTHER_VERSION: another version of the skill" in err
    assert "a no-skill baseline never triggers" in err
    # without the baseline it asks for, the run is refused before any call
    without = [a for a in argv[1:] if a not in ("--baseline-skill", "OTHER_VERSION")]
    code, _, refused = run_cli(*without)
    assert code == 2 and "no-skill baseline can never trigger" in refused
    # with another version filled in, it runs
    shutil.copytree("my-skill", "before")
    Path("my-skill/SKILL.md").write_text(
        Path("my-skill/SKILL.md").read_text().replace("test skill", "reports")
    )
    filled = [("before" if a == "OTHER_VERSION" else a) for a in argv[1:]]
    code, out, err = run_cli(*filled)
    assert code in (0, 1, 4), err
    assert read_json(out.strip())["triggers"]["queries"] == 2


def _recipe() -> list[str]:
    """The shell lines of the import recipe in references/interop.md (continuations joined)."""
    text = (REPO / "references" / "interop.md").read_text(encoding="utf-8")
    block = re.search(r"## Import.*?```bash\n(.*?)```", text, re.S)
    assert block is not None
    joined = block.group(1).replace("\\\n", " ")
    return [
        line.split("#")[0].strip() for line in joined.splitlines() if line.split("#")[0].strip()
    ]


def test_the_interop_recipe_runs_as_written_with_a_trigger_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _skill_with_evals(tmp_path)
    Path("trigger_eval.json").write_text(
        json.dumps([{"query": "make me a report", "should_trigger": True}]), encoding="utf-8"
    )
    lines = _recipe()
    assert "--trigger-set" in lines[0]
    codes = []
    for line in lines:
        argv = shlex.split(line)
        if argv[:2] == ["cp", "-r"]:
            shutil.copytree(argv[2], argv[3])
            # the recipe's next step: edit the description of the skill under test
            skill_md = Path(argv[2]) / "SKILL.md"
            skill_md.write_text(skill_md.read_text().replace("test skill", "makes reports"))
            continue
        assert argv[0] == "skill-eval", line
        code, out, err = run_cli(*argv[1:])
        codes.append(code)
        assert code in (0, 1, 4), f"{line}\n{err}"
    assert len(codes) == 3 and codes[:2] == [0, 0]
    artifact = read_json(out.strip())
    assert artifact["triggers"]["queries"] == 1
    assert artifact["manifest"]["arms"]["baseline"]["skill_origin"].startswith("my-skill-before")


# --- trigger suites: no false warning; arms told apart in every report --------------------------

TRIGGERS = [
    {"id": "q1", "query": "make me a report", "should_trigger": True},
    {"id": "q2", "query": "what is the weather", "should_trigger": False},
]


def _trigger_run(tmp_path: Path, tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """A mock run comparing two versions of one skill (same name, other folders); each has a
    file besides SKILL.md."""
    skills = []
    for folder, body in (("new", "New description."), ("old", "Old description.")):
        skill = write_skill(tmp_path / folder / "reports", body, name="reports")
        (skill / "reference.md").write_text("more\n", encoding="utf-8")
        skills.append(skill)
    suite = write_suite(tmp_path / "suite", tasks)
    outputs = write_outputs(
        tmp_path / "o.yaml", {"candidate": {"q1": {"triggered": True}}, "baseline": {}}
    )
    code, out, err = run_cli(
        "run",
        "--task-suite",
        str(suite),
        "--standalone",
        "--skill-path",
        str(skills[0]),
        "--baseline-skill",
        str(skills[1]),
        "--mock",
        "-q",
        "--mock-outputs",
        str(outputs),
        "--state-root",
        str(tmp_path / "state"),
    )
    assert code in (0, 1, 4), err
    return dict(read_json(out.strip()))


def test_a_trigger_only_suite_has_no_skill_md_alone_warning(tmp_path: Path) -> None:
    artifact = _trigger_run(tmp_path, TRIGGERS)
    assert not [w for w in artifact["warnings"] if "SKILL.md alone" in w]
    # a mixed suite's ordinary tasks do get SKILL.md alone in system mode: still said
    mixed = _trigger_run(
        tmp_path / "mixed",
        [*TRIGGERS, {"id": "t", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}}],
    )
    assert [w for w in mixed["warnings"] if "system mode sends SKILL.md alone" in w]


def test_every_report_tells_two_same_named_arms_apart(tmp_path: Path) -> None:
    artifact = _trigger_run(tmp_path, TRIGGERS)
    new, old = (str(tmp_path / f / "reports" / "SKILL.md") for f in ("new", "old"))
    assert artifact["manifest"]["arms"]["candidate"]["skill_origin"] == new
    table = render_table(artifact)
    assert (
        f"arms  candidate: candidate skill reports ({new}); baseline: baseline skill "
        f"reports ({old})" in re.sub(r" {2,}", "  ", table)
    )
    markdown = render_markdown(artifact)
    assert (
        f"candidate skill reports ({md_escape(new)}) — vs baseline skill reports "
        f"({md_escape(old)})" in markdown
    )
    html = render_html(artifact)
    for arm, path in (("candidate", new), ("baseline", old)):
        assert f"<h2>{arm} <small>{arm} skill: reports ({path})</small></h2>" in html
    junit = render_junit(artifact)
    assert f'<property name="candidate_arm" value="candidate skill reports ({new})" />' in junit
    assert f'<property name="baseline_arm" value="baseline skill reports ({old})" />' in junit


def test_arms_with_different_names_are_named_without_paths(tmp_path: Path) -> None:
    suite = write_suite(
        tmp_path / "suite",
        [{"id": "t", "prompt": "p", "judge": {"type": "contains", "expected": ["x"]}}],
    )
    code, out, err = run_cli(
        "run",
        "--task-suite",
        str(suite),
        "--standalone",
        "--skill-path",
        str(write_skill(tmp_path / "alpha")),
        "--baseline-skill",
        str(write_skill(tmp_path / "beta")),
        "--mock",
        "-q",
        "--state-root",
        str(tmp_path / "state"),
    )
    artifact = read_json(out.strip())
    assert "arms  candidate: candidate skill alpha; baseline: baseline skill beta" in re.sub(
        r" {2,}", "  ", render_table(artifact)
    )


# --- show: a failed pytest judgement's first failing assertion ----------------------------------


def test_show_gives_the_first_failing_assertion_of_a_pytest_judgement(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite"
    (suite_dir / "fixtures").mkdir(parents=True)
    (suite_dir / "fixtures" / "test_report.py").write_text(
        textwrap.dedent("""\
        import os
        from pathlib import Path

        def test_has_total():
            text = Path(os.environ["AI_OUTPUT_FILE"]).read_text(encoding="utf-8")
            assert "Total" in text, "the report names no Total"
        """),
        encoding="utf-8",
    )
    suite = write_suite(
        suite_dir,
        [
            {
                "id": "report",
                "prompt": "p",
                "judge": {"type": "pytest", "test_file": "fixtures/test_report.py"},
            }
        ],
    )
    code, out, err = run_cli(
        "run",
        "--task-suite",
        str(suite),
        "--standalone",
        "--skill-path",
        str(write_skill(tmp_path / "skill")),
        "--no-baseline",
        "--mock",
        "-q",
        "--state-root",
        str(tmp_path / "state"),
    )
    assert code == 1, err
    code, shown, err = run_cli("show", out.strip())
    assert code == 0, err
    assert (
        "    #0 failed  ✗ pytest 0.00 1 of 1 test(s) failed or errored: test_has_total: "
        "AssertionError: the report names no Total" in shown.splitlines()
    )
