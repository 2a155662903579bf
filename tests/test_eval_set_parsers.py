"""The eval-set readers as pure functions (inputs/evalsets/): data in, evals and judges out, or
one located error. Tables of the shapes and edge cases the end-to-end tests
(test_eval_sets.py) take through the CLI: thresholds as shares and as counts, every check
field and operator, trigger-set shapes, bad fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skill_eval.errors import SuiteError
from skill_eval.inputs.evalsets.checks import judge_for
from skill_eval.inputs.evalsets.folder import parse_eval_data
from skill_eval.inputs.evalsets.operators import js_flags, length_pattern
from skill_eval.inputs.evalsets.records import EvalsFile, collapse
from skill_eval.inputs.evalsets.triggers import TriggerSet
from skill_eval.judges.simple import compile_pattern

PATH = Path("/nowhere/evals.json")


def one_eval(data: Any) -> Any:
    read = parse_eval_data(data, PATH)
    assert isinstance(read, EvalsFile)
    (case,) = read.evals
    return case


def judge(data: Any) -> Any:
    case = one_eval(data)
    return judge_for(
        case.expectations,
        case.checks,
        threshold=case.threshold,
        expected_output=case.expected_output,
        rubric=case.rubric,
        rubric_threshold=case.rubric_threshold,
    )


def evals(**entry: Any) -> dict[str, Any]:
    return {"skill_name": "s", "evals": [{"id": 1, "prompt": "p", **entry}]}


def error(data: Any) -> str:
    with pytest.raises(SuiteError) as caught:
        parse_eval_data(data, PATH)
    (problem,) = caught.value.problems
    return f"{problem.field}: {problem.message}"


# -- check fields: each the judge it becomes -------------------------------------------------------

CONTAINS = {"type": "contains", "expected": ["x"]}


@pytest.mark.parametrize(
    "entry, expected",
    [
        ({"expectations": ["A"]}, {"type": "expectations", "expectations": ["A"]}),
        ({"checks": ["A", "B"]}, {"type": "expectations", "expectations": ["A", "B"]}),
        ({"assertions": [{"id": "a", "text": "A"}]},
         {"type": "expectations", "expectations": ["A"]}),
        ({"assertions": [{"name": "slug", "description": "A"}]},
         {"type": "expectations", "expectations": ["A"]}),
        ({"expectations": ["A"], "assertions": ["A"]},
         {"type": "expectations", "expectations": ["A"]}),
        ({"anti_expectations": ["Does not guess"]},
         {"type": "expectations", "expectations": ["Does not guess"]}),
        ({"expected_behavior": "Asks first"},
         {"type": "expectations", "expectations": ["Asks first"]}),
        ({"fail": ["runs nmap first"]},
         {"type": "expectations", "expectations": ["This does not happen: runs nmap first"]}),
        ({"evaluation_criteria": {"order": "Phases in order"}},
         {"type": "expectations", "expectations": ["Phases in order"]}),
        ({"rubric": [{"dimension": "Evidence", "pass_if": "cites files"}]},
         {"type": "expectations", "expectations": ["Evidence: cites files"]}),
        ({"rubric": "Score the shape"}, {"type": "llm-rubric", "rubric": "Score the shape"}),
        ({"rubric": "Score", "threshold": 0.6},
         {"type": "llm-rubric", "rubric": "Score", "pass_threshold": 0.6}),
        ({"must_have": ["a\\d"]}, {"type": "regex", "pattern": "a\\d"}),
        ({"must_not_have": ["b"]}, {"type": "not-regex", "pattern": "b"}),
        ({"must_contain": ["x"]}, CONTAINS),
        ({"must_not_contain": [{"regex": "y+"}]}, {"type": "not-regex", "pattern": "y+"}),
        ({"must_have": ["a"], "must_not_have": ["b"]},
         {"type": "all", "judges": [{"type": "regex", "pattern": "a"},
                                    {"type": "not-regex", "pattern": "b"}]}),
        ({"expectations": ["A"], "must_contain": ["x"], "expected_output": "E"},
         {"type": "all", "judges": [{"type": "expectations", "expectations": ["A"],
                                     "expected_output": "E"}, CONTAINS]}),
    ],
)  # fmt: skip
def test_each_check_field_becomes_its_judge(entry: dict[str, Any], expected: Any) -> None:
    assert judge(evals(**entry)) == expected


@pytest.mark.parametrize(
    "check, expected",
    [
        ({"type": "contains", "value": "x"}, CONTAINS),
        ({"kind": "contains", "value": "x"}, CONTAINS),
        ({"type": "content_includes_all", "value": ["x", "y"]},
         {"type": "contains", "expected": ["x", "y"]}),
        ({"type": "contains_any", "values": ["x", "y"]},
         {"type": "any", "judges": [CONTAINS, {"type": "contains", "expected": ["y"]}]}),
        ({"type": "not-contains", "value": "x"}, {"type": "not-contains", "expected": ["x"]}),
        ({"type": "regex_excludes", "value": "z"}, {"type": "not-regex", "pattern": "z"}),
        ({"type": "regex", "pattern": "^a", "flags": "gim"},
         {"type": "regex", "pattern": "^a", "flags": ["ignorecase", "multiline"]}),
        ({"type": "min_length", "value": 3}, {"type": "regex", "pattern": "\\S[\\s\\S]{1,}\\S"}),
        ({"type": "file_exists", "path": "out.txt"}, {"type": "file-exists", "paths": ["out.txt"]}),
        ({"type": "file_contains", "path": "a.js", "needle": '""'},
         {"type": "contains", "expected": ['""'], "file": "a.js"}),
        ({"type": "file_matches", "path": "r.txt", "pattern": "(?i)fail"},
         {"type": "regex", "pattern": "(?i)fail", "file": "r.txt"}),
        ({"type": "contains", "value": "X", "case_sensitive": True},
         {"type": "contains", "expected": ["X"], "case_sensitive": True}),
    ],
)  # fmt: skip
def test_each_operator_becomes_its_judge(check: dict[str, Any], expected: Any) -> None:
    assert judge(evals(assertions=[check])) == expected


def test_a_check_block_holds_operators_and_keeps_its_statement_as_the_label() -> None:
    block = {
        "text": "Test file asserts on rendered text",
        "check": {
            "files_exist": ["C.test.tsx"],
            "file_contains": [{"path": "C.test.tsx", "contains": "getByText"}],
            "not_matches": ["\\.state\\.count"],
        },
    }
    label = {"x-name": "Test file asserts on rendered text"}
    assert judge(evals(assertions=[block])) == {
        "type": "all",
        "judges": [
            {"type": "file-exists", "paths": ["C.test.tsx"], **label},
            {"type": "contains", "expected": ["getByText"], "file": "C.test.tsx", **label},
            {"type": "not-regex", "pattern": "\\.state\\.count", **label},
        ],
    }
    assert judge(evals(assertions=[{"text": "Edits the test first", "check": None}])) == {
        "type": "expectations",
        "expectations": ["Edits the test first"],
    }


@pytest.mark.parametrize(
    "check, dropped",
    [
        ({"type": "json_valid"}, "evals[0].assertions[0]: check 'json_valid' has no judge here"),
        ({"type": "script", "command": ["x"]}, "evals[0].assertions[0]: runs a command"),
        ({"type": "regex", "pattern": "a", "flags": "y"}, "evals[0].assertions[0].flags: 'y'"),
        ({"text": "A", "check": "grep x out"}, "evals[0].assertions[0].check: a shell command"),
    ],
)
def test_a_check_with_no_judge_is_listed_not_lost(check: dict[str, Any], dropped: str) -> None:
    case = one_eval(evals(assertions=[check], expected_output="E"))
    assert any(line.startswith(dropped) for line in case.dropped), case.dropped


# -- thresholds: shares and counts -------------------------------------------------------------


@pytest.mark.parametrize(
    "case, share",
    [
        ({"rubric": "r"}, 0.7),  # Driftproof's default
        ({"rubric": "r", "pass_threshold": 0.85}, 0.85),
        ({"rubric": "r", "pass_threshold": 1}, 1.0),
        ({"rubric": "r", "threshold": 0}, 0.0),
        ({"criteria": "r", "pass_threshold": 0.5}, 0.5),
    ],
)
def test_a_case_threshold_is_a_share_of_the_rubrics_score(
    case: dict[str, Any], share: float
) -> None:
    read = one_eval({"skill": "s", "cases": [{"id": "a", "prompt": "p", **case}]})
    assert (read.rubric, read.rubric_threshold) == ("r", share)


@pytest.mark.parametrize(
    "rubric, share",
    [
        ({"pass_threshold": 0.5, "checks": [{"type": "contains", "value": "a"}] * 2}, 0.5),
        ({"pass_threshold": 2, "checks": [{"type": "contains", "value": "a"}] * 4}, 0.5),
        ({"pass_threshold": 3, "checks": [{"type": "contains", "value": "a"}] * 3}, 1.0),
        ({"checks": [{"type": "regex", "pattern": "a"}]}, None),
    ],
)
def test_a_rubric_objects_threshold_is_a_share_or_a_count_of_checks(
    rubric: dict[str, Any], share: float | None
) -> None:
    read = one_eval({"skill": "s", "cases": [{"id": "a", "prompt": "p", "rubric": rubric}]})
    assert read.threshold == share and read.rubric is None and read.checks


@pytest.mark.parametrize(
    "data, message",
    [
        ({"skill": "s", "cases": [{"id": "a", "prompt": "p", "rubric": "r", "pass_threshold": 70}]},
         "cases[0].pass_threshold: must be a number from 0 to 1 (the share of the rubric's "
         "score); got 70"),
        ({"skill": "s", "cases": [{"id": "a", "prompt": "p", "rubric": "r",
                                   "pass_threshold": True}]},
         "cases[0].pass_threshold: must be a number from 0 to 1 (the share of the rubric's "
         "score); got True"),
        ({"skill": "s", "cases": [{"id": "a", "prompt": "p", "rubric": {
            "pass_threshold": 5, "checks": [{"type": "contains", "value": "a"}] * 2}}]},
         "cases[0].rubric.pass_threshold: must be a share between 0 and 1, or a number of "
         "checks (at most 2); got 5"),
        ({"skill": "s", "cases": [{"id": "a", "prompt": "p", "rubric": {
            "pass_threshold": 1.5, "checks": [{"type": "contains", "value": "a"}] * 2}}]},
         "cases[0].rubric.pass_threshold: must be a share between 0 and 1, or a number of "
         "checks (at most 2); got 1.5"),
        ({"skill": "s", "cases": [{"id": "a", "prompt": "p", "rubric": 3}]},
         "cases[0].rubric: must be a non-empty string (what a model grades) or a list"),
        ({"skill": "s", "cases": [{"id": "a", "prompt": "p", "rubric": "r", "claim": ""}]},
         "cases[0].claim: must be a non-empty string"),
        ({"skill": "s", "cases": [{"id": "a", "prompt": "p", "checks": [{"name": "n"}]}]},
         "cases[0].checks[0]: must be a check object ({name, kind, pattern | value})"),
        ({"skill": "s", "cases": [{"id": "a", "prompt": "p"}, {"id": "a", "prompt": "q"}]},
         "cases[1].id: duplicate id 'a': cases[0] too"),
        (evals(must_have="("), "evals[0].must_have: invalid regular expression '('"),
        (evals(must_contain=[3]), "evals[0].must_contain[0]: must be a non-empty string"),
        (evals(expectations="one"),
         "evals[0].expectations: must be a list of non-empty strings (or statement objects)"),
        (evals(assertions=[{"type": "min_length", "value": -1}]),
         "evals[0].assertions[0].value: must be a whole number of characters (0 or more)"),
        (evals(assertions=[{"type": "regex", "flags": "i"}]),
         "evals[0].assertions[0]: a regex check needs a `value` (or `pattern`)"),
        (evals(timeout_seconds=0), "evals[0].timeout_seconds: must be a number of seconds"),
        ({"evals": [{"id": 1, "prompt_file": "x.txt"}]},
         "evals[0].prompt_file: not found: 'x.txt' (looked in /nowhere)"),
        ({"evals": [{"id": 1, "prompt_file": "../x.txt"}]},
         "evals[0].prompt_file: must name a file beside evals.json (no link, no `..`)"),
        ([], "top level: must be a non-empty list of evals"),
        ({"skill_name": "s"}, "top level: must be an object with skill_name and evals"),
    ],
)  # fmt: skip
def test_bad_fields_are_one_located_error(data: Any, message: str) -> None:
    assert error(data).startswith(message), error(data)


# -- envelopes and trigger sets ----------------------------------------------------------------


@pytest.mark.parametrize(
    "data, ids",
    [
        ([{"id": "a", "prompt": "p", "expect": ["x"]}], ["a"]),  # a bare list
        ({"skill_name": "s", "test_cases": [{"id": "t", "prompt": "p",
                                              "expected_behavior": ["x"]}]}, ["t"]),
        ([{"query": "q1", "expected_behavior": "x"}, {"query": "q2", "expected_behavior": "y"}],
         [1, 2]),  # no ids: their positions; `query` as the prompt
        ({"version": 1, "cases": [{"id": "c", "prompt": "p", "expected_output": "x"}]}, ["c"]),
    ],
)  # fmt: skip
def test_envelopes_of_evals(data: Any, ids: list[Any]) -> None:
    read = parse_eval_data(data, PATH)
    assert isinstance(read, EvalsFile) and [e.id for e in read.evals] == ids


@pytest.mark.parametrize(
    "data, queries",
    [
        ([{"query": "a", "should_trigger": True}, {"query": "b", "should_trigger": False}],
         [("a", True), ("b", False)]),
        ({"skill_name": "s", "queries": [{"query": "a", "should_trigger": True}]}, [("a", True)]),
        ({"version": 1, "cases": [{"id": "x", "query": "a", "should_trigger": False}]},
         [("a", False)]),
        ({"skill": "s", "cases": [{"id": "x", "prompt": "a", "should_trigger": True}]},
         [("a", True)]),
        ({"cases": [{"id": "x", "query": "a", "expected": "should_not_trigger"}]},
         [("a", False)]),
        ({"skill_name": "s", "should_trigger": ["a"], "should_not_trigger": ["b"]},
         [("a", True), ("b", False)]),
        ({"triggers": [{"query": "a", "should_trigger": True}]}, [("a", True)]),
    ],
)  # fmt: skip
def test_trigger_set_shapes(data: Any, queries: list[tuple[str, bool]]) -> None:
    read = parse_eval_data(data, PATH)
    assert isinstance(read, TriggerSet)
    assert [(q.query, q.should_trigger) for q in read.queries] == queries


def test_a_trigger_query_that_does_not_say_true_or_false_is_located() -> None:
    assert error([{"query": "a", "should_trigger": "yes"}]) == (
        "[0].should_trigger: must be true or false"
    )


# -- small pure helpers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n, over, text, found",
    [
        (3, False, "  ab  ", False),
        (3, False, " a b ", True),
        (1, False, "   ", False),
        (0, False, "x", True),
        (2, True, "ab", False),  # max_length 2: "ab" is allowed, the pattern must not be found
        (2, True, "a b", True),
    ],
)
def test_length_patterns_measure_the_trimmed_text(
    n: int, over: bool, text: str, found: bool
) -> None:
    pattern = compile_pattern({"pattern": length_pattern(n, over)})
    assert (pattern.search(text) is not None) is found


def test_javascript_flags_and_ours() -> None:
    assert js_flags(PATH, "f", "gimsu") == (["dotall", "ignorecase", "multiline"], "")
    assert js_flags(PATH, "f", "iy") == (["ignorecase"], "y")
    assert js_flags(PATH, "f", ["dotall"]) == (["dotall"], "")


def test_lines_that_differ_only_in_indexes_are_said_once() -> None:
    lines = [
        "evals[0].tags: no place in a task suite",
        "evals[1].tags: no place in a task suite",
        "evals[1]: name 'x' is not unique; task id 'eval-2'",
        "evals[3].tags: no place in a task suite",
    ]
    assert collapse(lines) == (
        "evals[*].tags: no place in a task suite (3 times)",
        "evals[1]: name 'x' is not unique; task id 'eval-2'",
    )


def test_a_skill_folder_with_many_eval_files_is_read_a_bounded_number(tmp_path: Path) -> None:
    """evals/ is the candidate's: the other JSON files read to tell what they hold are
    bounded; the rest are listed, not read."""
    from skill_eval.inputs.evalsets.folder import MAX_OTHER_FILES, find_skill_evals

    folder = tmp_path / "notes"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: notes\ndescription: d\n---\n", "utf-8")
    (folder / "evals" / "evals.json").write_text('{"evals": [{"prompt": "p"}]}', "utf-8")
    for i in range(MAX_OTHER_FILES + 3):
        (folder / "evals" / f"x{i:03d}.json").write_text("{}", "utf-8")
    found = find_skill_evals(folder)
    assert found.evals_json == folder / "evals" / "evals.json"
    whys = [why for _, why in found.unread]
    assert sum("over the 50 other JSON files" in w for w in whys) == 3
    assert sum("not an eval set skill-eval reads" in w for w in whys) == MAX_OTHER_FILES
