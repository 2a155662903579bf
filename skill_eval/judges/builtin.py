"""The built-in judges: YAML `type` -> the module that registers it (exactly as a plugin
would, through register_judge). Modules load on first use, so validating a suite that only
uses `contains` never imports the model-graded judges. Adding a judge is one line here."""

BUILTIN_JUDGES = {
    "contains": "contains",
    "not-contains": "simple",
    "regex": "simple",
    "equals": "simple",
    "json-schema": "simple",
    "threshold": "simple",
    "all": "combinators",
    "any": "combinators",
    "weighted": "combinators",
    "python": "python_judge",
    "pytest": "pytest_judge",
    "llm-rubric": "llm_rubric",
    "rubric": "rubric",
    "lint": "lint",
    "composite": "composite",
}
