"""The task-suite loader and validator: safe YAML, schema, semantic rules, every problem
located by file, line, task and field."""

from __future__ import annotations

import hashlib
import json
import os
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from skill_eval.core.safeyaml import YamlError, load_yaml_text
from skill_eval.errors import Problem, SuiteError
from skill_eval.inputs.suite import load_suite, suite_schema, validate_paths
from skill_eval.judges.base import REGISTRY, JudgeSpec, judge_types, register_judge

GOOD = """\
skill_id: "demo-skill"
version: "1.0"
description: "suite-level description"
generated_by: {tool: "suite-gen", model: "x"}
x-owner: "team-a"
tasks:
  - id: "t-1"
    prompt: "Say POWERFUL"
    judge:
      type: "contains"
      expected: ["POWERFUL"]
  - id: "t-2"
    description: "with every optional field"
    category: "format"
    source: {file: "notes.md", line: 3}
    x-note: 1
    prompt: "Say hi"
    judge: {type: "contains", expected: ["hi"], x-why: "greeting"}
    timeout_seconds: 30
"""


def write(tmp_path: Path, text: str | bytes, name: str = "task_suite.yaml") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def problems_of(path: Path) -> list[Problem]:
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert caught.value.problems, "a SuiteError for a bad file must list its problems"
    return caught.value.problems


def rendered(path: Path) -> list[str]:
    """The problems as the CLI prints them, with the tmp dir replaced by `S`."""
    return [str(p).replace(str(path.parent), "S") for p in problems_of(path)]


# --- valid suites -------------------------------------------------------------------------


def test_valid_suite_loads_with_defaults_and_metadata(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    suite = load_suite(str(path))
    assert suite.path == path.resolve() and suite.path.is_absolute()
    assert suite.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (suite.skill_id, suite.version) == ("demo-skill", "1.0")
    assert suite.description == "suite-level description"
    first, second = suite.tasks
    assert (first.id, first.index, first.timeout_seconds) == ("t-1", 0, 300.0)
    assert first.judge == {"type": "contains", "expected": ["POWERFUL"]}
    assert (second.index, second.timeout_seconds, second.category) == (1, 30.0, "format")
    assert second.description == "with every optional field"
    assert suite.directory == tmp_path.resolve()


def test_directory_means_its_task_suite_yaml(tmp_path: Path) -> None:
    write(tmp_path, GOOD)
    assert load_suite(tmp_path).skill_id == "demo-skill"


def test_aliases_and_merge_keys_are_plain_yaml(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        skill_id: s
        version: "1.0"
        x-judges:
          hi: &hi {type: contains, expected: [hi]}
        tasks:
          - {id: a, prompt: p, judge: *hi}
          - id: b
            prompt: p
            judge:
              <<: *hi
              expected: [bye]
        """,
    )
    suite = load_suite(path)
    assert suite.tasks[0].judge == {"type": "contains", "expected": ["hi"]}
    assert suite.tasks[1].judge == {"type": "contains", "expected": ["bye"]}


def test_missing_file_message_is_kept_word_for_word(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    with pytest.raises(SuiteError) as caught:
        load_suite(missing)
    assert str(caught.value) == f"Task suite not found: {missing}"
    assert caught.value.path == missing


def test_shipped_schema_is_valid_draft_2020_12() -> None:
    Draft202012Validator.check_schema(suite_schema())
    assert suite_schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


# --- one bad file per rule: the exact line the user sees ------------------------------------

TASK = '  - id: "t-1"\n    prompt: "p"\n    judge: {type: contains, expected: [x]}\n'
HEAD = 'skill_id: "s"\nversion: "1.0"\ntasks:\n'

TIMEOUT_RULE = "must be a number of seconds greater than 0 and at most 86400 (24 hours)"
NOT_FINITE = (
    'S/task_suite.yaml:{line}: tasks[0] (id "t-1").{field}: must be a finite number, not {v}'
)

BAD_FILES = [
    (
        "skill_id missing",
        'version: "1.0"\ntasks:\n' + TASK,
        "S/task_suite.yaml:1: skill_id: is required",
    ),
    (
        "skill_id empty",
        'skill_id: ""\nversion: "1.0"\ntasks:\n' + TASK,
        "S/task_suite.yaml:1: skill_id: must be a non-empty string",
    ),
    (
        "version unquoted",
        "skill_id: s\nversion: 1.0\ntasks:\n" + TASK,
        'S/task_suite.yaml:2: version: must be the string "1.0": YAML reads an unquoted 1.0 '
        'as a number, so write version: "1.0"',
    ),
    (
        "version wrong",
        'skill_id: s\nversion: "2.0"\ntasks:\n' + TASK,
        'S/task_suite.yaml:2: version: must be the string "1.0"',
    ),
    (
        "version missing",
        "skill_id: s\ntasks:\n" + TASK,
        "S/task_suite.yaml:1: version: is required",
    ),
    ("tasks missing", 'skill_id: s\nversion: "1.0"\n', "S/task_suite.yaml:1: tasks: is required"),
    (
        "tasks empty",
        HEAD.replace("tasks:\n", "tasks: []\n"),
        "S/task_suite.yaml:3: tasks: must be a non-empty list of tasks",
    ),
    (
        "tasks not a list",
        HEAD.replace("tasks:\n", "tasks: {a: 1}\n"),
        "S/task_suite.yaml:3: tasks: must be a non-empty list of tasks",
    ),
    (
        "unknown suite key",
        HEAD + TASK + "taks: 1\n",
        "S/task_suite.yaml:7: taks: unknown key 'taks' (did you mean 'tasks'?); allowed: "
        "skill_id, version, description, generated_by, allowed_tools, observers, tasks",
    ),
    (
        "task not a mapping",
        HEAD + "  - just a string\n",
        "S/task_suite.yaml:4: tasks[0]: must be a mapping, got a string 'just a string'",
    ),
    (
        "id missing",
        HEAD + '  - prompt: "p"\n    judge: {type: contains, expected: [x]}\n',
        "S/task_suite.yaml:4: tasks[0].id: is required",
    ),
    (
        "id not a string",
        HEAD + TASK.replace('"t-1"', "12"),
        "S/task_suite.yaml:4: tasks[0].id: must be a non-empty string",
    ),
    (
        "prompt empty",
        HEAD + TASK.replace('"p"', '""'),
        'S/task_suite.yaml:5: tasks[0] (id "t-1").prompt: must be a non-empty string',
    ),
    (
        "prompt missing",
        HEAD + '  - id: "t-1"\n    judge: {type: contains, expected: [x]}\n',
        'S/task_suite.yaml:4: tasks[0] (id "t-1").prompt: is required',
    ),
    (
        "judge missing",
        HEAD + '  - id: "t-1"\n    prompt: "p"\n',
        'S/task_suite.yaml:4: tasks[0] (id "t-1").judge: is required',
    ),
    (
        "timeout zero",
        HEAD + TASK + "    timeout_seconds: 0\n",
        f'S/task_suite.yaml:7: tasks[0] (id "t-1").timeout_seconds: {TIMEOUT_RULE}',
    ),
    (
        "timeout negative",
        HEAD + TASK + "    timeout_seconds: -5\n",
        f'S/task_suite.yaml:7: tasks[0] (id "t-1").timeout_seconds: {TIMEOUT_RULE}',
    ),
    (
        "timeout a string",
        HEAD + TASK + '    timeout_seconds: "30"\n',
        f'S/task_suite.yaml:7: tasks[0] (id "t-1").timeout_seconds: {TIMEOUT_RULE}',
    ),
    (
        "timeout too long",
        HEAD + TASK + "    timeout_seconds: 86401\n",
        f'S/task_suite.yaml:7: tasks[0] (id "t-1").timeout_seconds: {TIMEOUT_RULE}',
    ),
    (
        "timeout absurd",
        HEAD + TASK + "    timeout_seconds: 1.0e+30\n",
        f'S/task_suite.yaml:7: tasks[0] (id "t-1").timeout_seconds: {TIMEOUT_RULE}',
    ),
    (
        "timeout huge integer",
        HEAD + TASK + "    timeout_seconds: " + "9" * 400 + "\n",
        'S/task_suite.yaml:7: tasks[0] (id "t-1").timeout_seconds: is too large a number',
    ),
    (
        "timeout nan",
        HEAD + TASK + "    timeout_seconds: .nan\n",
        NOT_FINITE.format(line=7, field="timeout_seconds", v=".nan"),
    ),
    (
        "timeout inf",
        HEAD + TASK + "    timeout_seconds: .inf\n",
        NOT_FINITE.format(line=7, field="timeout_seconds", v=".inf"),
    ),
    (
        "timeout overflowing float",
        HEAD + TASK + "    timeout_seconds: 1.0e+999\n",
        NOT_FINITE.format(line=7, field="timeout_seconds", v=".inf"),
    ),
    (
        "judge number nan",
        HEAD + '  - id: "t-1"\n    prompt: "p"\n    judge:\n'
        "      type: llm-rubric\n      rubric: r\n      pass_threshold: .nan\n",
        NOT_FINITE.format(line=9, field="judge.pass_threshold", v=".nan"),
    ),
    (
        "metadata -inf",
        HEAD + TASK + "    x-weight: [1, -.inf]\n",
        NOT_FINITE.format(line=7, field="x-weight[1]", v="-.inf"),
    ),
    (
        "unknown task key",
        HEAD + TASK + '    promt: "typo"\n',
        "S/task_suite.yaml:7: tasks[0] (id \"t-1\").promt: unknown key 'promt' (did you mean "
        "'prompt'?); allowed: id, prompt, judge, query, should_trigger, timeout_seconds, "
        "description, category, source, files, allowed_tools, max_turns, observers, reference",
    ),
    (
        "duplicate id",
        HEAD + TASK + TASK,
        "S/task_suite.yaml:7: tasks[1] (id \"t-1\").id: duplicate task id 't-1': tasks[0] and "
        "tasks[1] share it",
    ),
    (
        "judge not a mapping",
        HEAD + '  - id: "t-1"\n    prompt: "p"\n    judge: contains\n',
        "S/task_suite.yaml:6: tasks[0] (id \"t-1\").judge: must be a mapping with a 'type'",
    ),
    (
        "judge without type",
        HEAD + '  - id: "t-1"\n    prompt: "p"\n    judge: {expected: [x]}\n',
        'S/task_suite.yaml:6: tasks[0] (id "t-1").judge.type: is required (a judge type such '
        "as 'contains')",
    ),
    (
        "contains expected empty",
        HEAD + '  - id: "t-1"\n    prompt: "p"\n    judge:\n      type: contains\n'
        "      expected: []\n",
        'S/task_suite.yaml:8: tasks[0] (id "t-1").judge.expected: must be a non-empty string or '
        "a non-empty list of strings",
    ),
    (
        "promptfoo's value for expected",
        HEAD + '  - id: "t-1"\n    prompt: "p"\n    judge:\n      type: contains\n'
        "      value: '## Added'\n",
        "S/task_suite.yaml:8: tasks[0] (id \"t-1\").judge.value: unknown key 'value' (did you "
        "mean 'expected'?); allowed: type, expected, file, scope, case_sensitive",
    ),
    (
        "judge key misspelt",
        HEAD + '  - id: "t-1"\n    prompt: "p"\n    judge:\n      type: contains\n'
        "      expected: [x]\n      expectd: [y]\n",
        "S/task_suite.yaml:9: tasks[0] (id \"t-1\").judge.expectd: unknown key 'expectd' (did "
        "you mean 'expected'?); allowed: type, expected, file, scope, case_sensitive",
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"), [case[1:] for case in BAD_FILES], ids=[case[0] for case in BAD_FILES]
)
def test_each_rule_reports_file_line_task_and_field(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = write(tmp_path, text)
    assert rendered(path) == [expected]


def test_unknown_judge_type_lists_the_valid_ones(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + TASK.replace("type: contains", "type: containz"))
    [line] = rendered(path)
    prefix = (
        'S/task_suite.yaml:6: tasks[0] (id "t-1").judge.type: unknown judge type '
        "'containz' (did you mean 'contains'?); valid types: "
    )
    assert line.startswith(prefix)
    assert "contains" in line[len(prefix) :].split(", ")


def test_problem_attributes_travel_apart_from_the_message(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEAD + TASK + '  - id: "t-3"\n    prompt: "p"\n    judge:\n'
        "      type: contains\n      expected: []\n",
    )
    [problem] = problems_of(path)
    assert problem == Problem(
        path=str(path),
        message="must be a non-empty string or a non-empty list of strings",
        line=11,
        field="judge.expected",
        task_index=1,
        task_id="t-3",
    )


def test_every_problem_in_one_file_is_reported_in_line_order(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        skill_id: ""
        version: 1.0
        tasks:
          - id: a
            prompt: ""
            judge: {type: contains, expectd: [x]}
            timeout_seconds: 0
          - id: a
            prompt: p
            judge: {type: contains, expected: [x]}
          - 7
        colour: blue
        """,
    )
    problems = problems_of(path)
    assert [(p.line, p.task_index, p.field) for p in problems] == [
        (1, None, "skill_id"),
        (2, None, "version"),
        (5, 0, "prompt"),
        (6, 0, "judge.expectd"),  # unknown key, did you mean 'expected'
        (6, 0, "judge.expected"),  # is required
        (7, 0, "timeout_seconds"),
        (8, 1, "id"),  # duplicate
        (11, 2, ""),
        (12, None, "colour"),
    ]


def test_task_id_is_named_only_when_it_is_a_string(tmp_path: Path) -> None:
    path = write(
        tmp_path, HEAD + '  - id: 5\n    prompt: ""\n    judge: {type: contains, expected: [x]}\n'
    )
    problems = problems_of(path)
    assert {(p.task_index, p.task_id) for p in problems} == {(0, None)}


@pytest.fixture
def fresh_registry() -> Iterator[None]:
    """Judges registered by a test are forgotten afterwards."""
    REGISTRY.reset()
    yield
    REGISTRY.reset()


def test_a_crashing_judge_check_is_a_problem_not_a_traceback(
    tmp_path: Path, fresh_registry: None
) -> None:
    def check(config: object, suite_dir: Path) -> list[tuple[str, str]]:
        raise RuntimeError("boom")

    judge_types()  # load the built-ins first, so ours is not overwritten
    spec = JudgeSpec(
        type="test-crashing-check",
        schema={"type": "object"},
        build=lambda config: None,
        check=check,
    )  # type: ignore[arg-type,return-value]
    register_judge(spec)
    path = write(
        tmp_path, HEAD + TASK.replace("type: contains, expected: [x]", "type: test-crashing-check")
    )
    assert rendered(path) == [
        'S/task_suite.yaml:6: tasks[0] (id "t-1").judge: judge check failed: RuntimeError: boom'
    ]


def test_judge_semantic_checks_get_the_suite_directory(
    tmp_path: Path, fresh_registry: None
) -> None:
    seen: list[Path] = []

    def check(config: dict, suite_dir: Path) -> list[tuple[str, str]]:
        seen.append(suite_dir)
        return [("test_file", "must start with fixtures/")]

    judge_types()
    spec = JudgeSpec(
        type="test-dir-check", schema={"type": "object"}, build=lambda config: None, check=check
    )  # type: ignore[arg-type,return-value]
    register_judge(spec)
    path = write(
        tmp_path / "suite",
        HEAD + '  - id: "t-1"\n    prompt: "p"\n    judge:\n'
        "      type: test-dir-check\n      test_file: ../x.py\n",
    )
    assert rendered(path) == [
        'S/task_suite.yaml:8: tasks[0] (id "t-1").judge.test_file: must start with fixtures/'
    ]
    assert seen == [(tmp_path / "suite").resolve()]


# --- hostile and broken YAML ----------------------------------------------------------------


@pytest.mark.parametrize(
    "tag",
    [
        "!!python/object/apply:os.system",
        "!!python/object/new:os.system",
        "!!python/name:os.system",
        "!custom",
    ],
)
def test_python_and_custom_tags_are_refused_and_never_run(tmp_path: Path, tag: str) -> None:
    marker = tmp_path / "pwned"
    path = write(tmp_path, HEAD + TASK + f'    x-payload: {tag} ["touch {marker}"]\n')
    [line] = rendered(path)
    assert line.startswith(f"S/task_suite.yaml:7: unsupported tag {tag!r}; only plain YAML")
    assert not marker.exists()


def test_alias_bomb_is_refused_fast(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    path = write(tmp_path, "\n".join(lines) + "\n")
    started = time.perf_counter()
    problems = problems_of(path)
    # Expanded, the bomb is 9**10 nodes (hours); counted, it is refused at once: 30 s holds on
    # a loaded machine and still tells the two apart.
    assert time.perf_counter() - started < 30
    assert [p.line for p in problems] == [6]  # where the expansion crosses the limit
    assert "too many YAML nodes (over 100000 once aliases are expanded)" in problems[0].message


def test_plain_nodes_are_judged_by_size_and_aliases_by_ratio() -> None:
    from skill_eval.core.safeyaml import YamlError, load_yaml_text

    # Issue 17: written nodes are bounded by the file's size, not counted as a bomb.
    data, _ = load_yaml_text("x-big: [" + "1, " * 2000 + "]\n", "s.yaml", max_nodes=1000)
    assert len(data["x-big"]) == 2000
    # 2,000 written; each alias of the list adds 2,001: refused once past 10x the written
    bomb = "x-big: &b [" + "1, " * 2000 + "]\nx-more: [" + "*b, " * 20 + "]\n"
    with pytest.raises(YamlError) as caught:
        load_yaml_text(bomb, "s.yaml", max_nodes=1000)
    assert "(over 20150 once aliases are expanded): 10x the 2015 written" in str(caught.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: &a [*a]\n", "S/task_suite.yaml:1: alias *a is used inside its own anchor"),
        ("a: *nope\n", "S/task_suite.yaml:1: alias *nope has no anchor"),
        (
            "x: " + "[" * 150 + "]" * 150 + "\n",
            "S/task_suite.yaml:1: nesting deeper than 100 levels",
        ),
        ("a: 1\n---\nb: 2\n", "S/task_suite.yaml:2: expected one YAML document, found several"),
        ("a: !!int twelve\n", "S/task_suite.yaml:1: cannot read 'twelve' as !!int"),
        ("1.5: x\n", "S/task_suite.yaml:1: mapping keys must be strings, got 1.5 (quote it)"),
        (
            "a: \x07\n",
            "S/task_suite.yaml:1: YAML cannot read this file: control characters are not allowed",
        ),
    ],
)
def test_unsafe_or_odd_yaml_is_refused_with_its_line(
    tmp_path: Path, text: str, expected: str
) -> None:
    assert rendered(write(tmp_path, text)) == [expected]


def test_oversized_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = write(tmp_path, b"# " + b"x" * (1024 * 1024) + b"\n")
    assert rendered(path) == [
        f"S/task_suite.yaml: file is too large ({1024 * 1024 + 3} bytes; the limit is "
        f"{1024 * 1024} bytes)"
    ]


def test_non_utf8_names_the_line(tmp_path: Path) -> None:
    raw = (HEAD + TASK).encode("utf-8").replace(b'"p"', b'"caf\xe9"')
    path = write(tmp_path, raw)
    offset = raw.index(b"\xe9")
    assert rendered(path) == [
        f"S/task_suite.yaml:5: not valid UTF-8 (byte 0xe9 at offset {offset}); save the file "
        "as UTF-8"
    ]


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, b"\xef\xbb\xbf" + GOOD.encode("utf-8"))
    assert load_suite(path).skill_id == "demo-skill"


def test_syntax_error_has_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD + TASK + '    description: "unterminated: x\n  - id: b\n')
    [line] = rendered(path)
    assert line.startswith("S/task_suite.yaml:")
    assert "YAML syntax error (column" in line
    bad = write(tmp_path, 'skill_id: s\nversion: "1.0"\ntasks: x: y\n', "two.yaml")
    assert rendered(bad) == [
        "S/two.yaml:3: YAML syntax error (column 9): mapping values are not allowed in this context"
    ]


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("- a\n- b\n", "got a list"),
        ("just text\n", "got a string"),
        ("", "the file is empty"),
        ("# only a comment\n", "the file is empty"),
    ],
)
def test_top_level_must_be_a_mapping(tmp_path: Path, text: str, what: str) -> None:
    assert rendered(write(tmp_path, text)) == [
        f"S/task_suite.yaml:1: the top level must be a mapping with skill_id, version and "
        f"tasks; {what}"
    ]


def test_duplicate_keys_are_errors_at_any_depth(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEAD.replace('version: "1.0"\n', 'version: "1.0"\nversion: "1.0"\n')
        + '  - id: "t-1"\n    prompt: "p"\n    judge:\n      type: contains\n'
        "      type: contains\n      expected: [x]\n",
    )
    assert rendered(path) == [
        "S/task_suite.yaml:3: version: duplicate key 'version' (first defined at line 2)",
        "S/task_suite.yaml:9: tasks[0].judge.type: duplicate key 'type' (first defined at line 8)",
    ]


# --- safeyaml on its own (the evaluator-skill loader reuses it) --------------------------


def test_load_yaml_text_gives_lines_of_keys_and_items() -> None:
    data, lines = load_yaml_text("a:\n  - x\n  - {k: v}\nb: &n 1\nc: *n\n", "f.yaml")
    assert data == {"a": ["x", {"k": "v"}], "b": 1, "c": 1}
    assert lines[("a",)] == 1 and lines[("a", 1)] == 3 and lines[("a", 1, "k")] == 3
    assert lines[("c",)] == 5


def test_load_yaml_text_raises_yaml_error_with_problems() -> None:
    with pytest.raises(YamlError) as caught:
        load_yaml_text("a: !!python/object:os.system x\nb: 1\nb: 2\n", "f.yaml")
    assert [str(p) for p in caught.value.problems] == [
        "f.yaml:1: unsupported tag '!!python/object:os.system'; only plain YAML data is "
        "allowed (strings, numbers, booleans, lists, mappings)",
        "f.yaml:3: b: duplicate key 'b' (first defined at line 2)",
    ]


# --- validate_paths and the CLI ----------------------------------------------------------


def test_validate_paths_walks_directories(tmp_path: Path) -> None:
    good = write(tmp_path / "suites" / "good", GOOD)
    bad = write(tmp_path / "suites" / "bad", HEAD + TASK + TASK)
    (tmp_path / "empty").mkdir()
    missing = tmp_path / "missing.yaml"
    report = validate_paths([str(tmp_path / "suites"), str(tmp_path / "empty"), str(missing)])
    assert report.valid == [str(good)]
    assert not report.ok
    assert [str(p) for p in report.problems] == [
        f"{bad}:7: tasks[1] (id \"t-1\").id: duplicate task id 't-1': tasks[0] and tasks[1] "
        "share it",
        f"{tmp_path / 'empty'}: no task_suite.yaml found below this directory",
        f"{missing}: task suite not found",
    ]
    assert validate_paths([str(good)]).ok


def test_cli_validate_exit_codes(tmp_path: Path) -> None:
    from skill_eval.cli import cli

    good = write(tmp_path / "good", GOOD)
    bad = write(tmp_path / "bad", HEAD + TASK + "    timeout_seconds: 0\n")
    runner = CliRunner()
    ok = runner.invoke(cli, ["validate", str(good)])
    assert ok.exit_code == 0, ok.output
    failed = runner.invoke(cli, ["validate", str(good), str(bad)])
    assert failed.exit_code == 2
    assert f'{bad}:7: tasks[0] (id "t-1").timeout_seconds: {TIMEOUT_RULE}' in failed.stderr
    assert "Traceback" not in failed.output


def test_suite_schema_is_shipped_as_package_data() -> None:
    import skill_eval

    shipped = Path(os.path.dirname(skill_eval.__file__)) / "schemas" / "task_suite.schema.json"
    assert json.loads(shipped.read_text(encoding="utf-8")) == suite_schema()
