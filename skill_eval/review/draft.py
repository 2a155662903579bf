"""The builder's draft suite: files read from its reply, written into a fresh folder, and the
validation a suite must pass before QA runs it (what `skill-eval validate` checks).

The reply is untrusted: its FILE blocks are read by the improver's parser (one format, one
path check), every path stays inside the draft folder, and nothing in it is run here.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from ..errors import SuiteError
from ..improve.improver import ProposalError, parse_improver_reply
from ..inputs.judge_checks import check_judges
from ..inputs.source_checks import judge_types, mock_output_problems, python_problems
from ..inputs.suite import load_suite

SUITE_FILE = "task_suite.yaml"
MOCK_OUTPUTS_FILE = "mock_outputs.yaml"  # scripted outputs for a QA run with --executor mock
MAX_FILES = 50
MAX_FILE_CHARS = 200_000


def parse_builder_reply(text: str) -> tuple[dict[str, str], str, list[str]]:
    """(files by relative path, rationale, problems) of a builder reply."""
    try:
        proposal = parse_improver_reply(text)
    except ProposalError as exc:
        return {}, "", [str(exc).replace("improver reply", "builder reply")]
    files = dict(proposal.files)
    problems: list[str] = []
    if SUITE_FILE not in files:
        problems.append(f"builder reply: no '=== FILE: {SUITE_FILE} ===' block")
    if len(files) > MAX_FILES:
        problems.append(f"builder reply: {len(files)} files; at most {MAX_FILES}")
    for path, body in files.items():
        if len(body) > MAX_FILE_CHARS:
            problems.append(f"file {path}: more than {MAX_FILE_CHARS} characters")
    return files, proposal.rationale, problems


def write_draft(files: Mapping[str, str], directory: Path) -> None:
    """Write the files into `directory`, emptied first: a retry leaves nothing of the draft
    before it. Paths were checked by the parser; the resolved check guards the rest."""
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    root = directory.resolve()
    for rel, body in sorted(files.items()):
        target = (root / rel).resolve()
        if root not in target.parents:
            raise ValueError(f"file {rel}: outside the suite folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")


def validate_draft(directory: Path) -> list[str]:
    """Every problem `skill-eval validate` would report for the draft (paths shown relative to
    the draft folder), the mock outputs file included when there is one. Empty: valid."""
    suite_path = directory / SUITE_FILE
    prefix = f"{directory}/"
    try:
        suite = load_suite(suite_path)
    except SuiteError as exc:
        lines = [str(p) for p in exc.problems] or [str(exc)]
        return [line.replace(prefix, "") for line in lines]
    problems = [str(p) for p in python_problems(suite, str(suite_path))]
    problems += [
        f'{SUITE_FILE}: tasks[{t.index}] (id "{t.id}").judge: the python judge '
        "imports code into the harness, so a generated suite may not use it; check "
        "with a pytest judge (it runs sandboxed) instead"
        for t in suite.tasks
        if "python" in set(judge_types(t.judge))
    ]
    if (directory / MOCK_OUTPUTS_FILE).is_file():
        problems += [
            str(p) for p in mock_output_problems(str(directory / MOCK_OUTPUTS_FILE), suite)
        ]
    if not problems:  # judges on references (run refuses what fails them); never python ones
        problems += [str(p) for p in check_judges(suite, str(suite_path)).errors]
    return [line.replace(prefix, "") for line in problems]


def draft_files(directory: Path) -> dict[str, str]:
    """The text files of a written draft, by relative path (shown to a builder that retries)."""
    out: dict[str, str] = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            out[path.relative_to(directory).as_posix()] = path.read_text(
                encoding="utf-8", errors="replace"
            )
    return out
