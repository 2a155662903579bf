"""The built-in judges as data: YAML `type` -> "module:SPEC" in this package. A module is
imported the first time its type is used, so validating a suite that only uses `contains`
never imports the model-graded judges. Adding a judge is one line here."""

BUILTIN_JUDGES = {
    "contains": "contains:CONTAINS_SPEC",
    "not-contains": "simple:NOT_CONTAINS_SPEC",
    "regex": "simple:REGEX_SPEC",
    "not-regex": "simple:NOT_REGEX_SPEC",
    "equals": "simple:EQUALS_SPEC",
    "json-schema": "json_output:JSON_SCHEMA_SPEC",
    "threshold": "json_output:THRESHOLD_SPEC",
    "all": "combinators:ALL_SPEC",
    "any": "combinators:ANY_SPEC",
    "weighted": "combinators:WEIGHTED_SPEC",
    "python": "python_judge:PYTHON_SPEC",
    "pytest": "pytest_judge:PYTEST_SPEC",
    "llm-rubric": "llm_rubric:LLM_RUBRIC_SPEC",
    "expectations": "expectations:EXPECTATIONS_SPEC",
    "rubric": "rubric:RUBRIC_SPEC",
    "lint": "lint:LINT_SPEC",
    "composite": "composite:COMPOSITE_SPEC",
    "file-exists": "work_judges:FILE_EXISTS_SPEC",
    "tool-called": "work_judges:TOOL_CALLED_SPEC",
    "skill-used": "work_judges:SKILL_USED_SPEC",
    "skill-triggered": "triggers.judge:SKILL_TRIGGERED_SPEC",
}
