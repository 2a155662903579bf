"""The improver seam: something that proposes a new version of the skill folder from feedback.

`Improver.propose` is a one-method protocol. `MockImprover` is the deterministic CI double;
model-backed improvers (backends.py: any executor's text model) send `build_improver_prompt`
and read the reply with `parse_improver_reply`. Every proposal passes `apply_proposal`, which
confines edits to the skill folder: model output is untrusted.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..errors import OutputRejected
from ..executors.mock_model import rule_line, rule_marker
from .feedback import Feedback

SKILL_FILE = "SKILL.md"
MAX_FILE_CHARS = 200_000
MAX_SHOWN_FILE_CHARS = 20_000


class ProposalError(OutputRejected):
    """An improver's proposal that cannot be applied (bad path, bad reply format)."""


@dataclass(frozen=True)
class Proposal:
    """New or rewritten files (path relative to the skill folder -> full text); files not named
    are kept as they are. `tokens` and `cost_usd` are what producing it cost."""

    files: Mapping[str, str]
    rationale: str = ""
    tokens: int = 0
    cost_usd: float = 0.0


class Improver(Protocol):
    def propose(
        self, skill_files: Mapping[str, str], feedback: Feedback, learnings: Sequence[str]
    ) -> Proposal: ...


_DRIVE = re.compile(r"^[A-Za-z]:")


def check_path(path: str) -> str:
    """`path` normalized (no `./`), or ProposalError when it could leave the skill folder."""
    if not isinstance(path, str) or not path.strip():
        raise ProposalError("file path: must be a non-empty string")
    if "\0" in path or "\\" in path:
        raise ProposalError(f"file path {path!r}: NUL and backslashes are not allowed")
    if path.startswith("/") or _DRIVE.match(path):
        raise ProposalError(f"file path {path!r}: must be relative to the skill folder")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise ProposalError(f"file path {path!r}: must stay inside the skill folder")
    return "/".join(parts)


def apply_proposal(
    current: Mapping[str, str], proposal: Proposal, protected: Collection[str] = ()
) -> dict[str, str]:
    """The new version: `current` with the proposal's files written over it.

    The whole proposal is rejected (ProposalError) when any path is unsafe, names a protected
    file (the task suite when it lives in the skill folder), or a file is too large.
    """
    if not proposal.files:
        raise ProposalError("proposal: names no file")
    guarded = {check_path(p) for p in protected}
    out = dict(current)
    for raw, text in proposal.files.items():
        path = check_path(raw)
        if path in guarded:
            raise ProposalError(f"file path {raw!r}: the task suite cannot be edited")
        if not isinstance(text, str) or len(text) > MAX_FILE_CHARS:
            raise ProposalError(f"file {path}: must be text of at most {MAX_FILE_CHARS} chars")
        out[path] = text
    if not out.get(SKILL_FILE, "").strip():
        raise ProposalError(f"file {SKILL_FILE}: must not be empty")
    return out


class MockImprover:
    """Deterministic improver for CI (a test double): appends to SKILL.md one rule per failing
    task that the skill lacks, keyed by the task's category when it has one (see the mock
    model, executors/mock_model.py)."""

    def __init__(self, tokens_per_call: int = 0, cost_per_call: float = 0.0) -> None:
        self.tokens_per_call = tokens_per_call
        self.cost_per_call = cost_per_call
        self.calls: list[Feedback] = []
        self.learnings_seen: list[tuple[str, ...]] = []

    def propose(
        self, skill_files: Mapping[str, str], feedback: Feedback, learnings: Sequence[str]
    ) -> Proposal:
        self.calls.append(feedback)
        self.learnings_seen.append(tuple(learnings))
        text = skill_files.get(SKILL_FILE, "")
        added: list[str] = []
        for failing in feedback.failing:
            key = failing.category or failing.task_id
            if rule_marker(key) not in text and rule_line(key) not in added:
                added.append(rule_line(key))
        if added:
            text = text.rstrip("\n") + "\n\n" + "\n".join(added) + "\n"
        return Proposal(
            {SKILL_FILE: text},
            f"added {len(added)} rule(s)",
            self.tokens_per_call,
            self.cost_per_call,
        )


# The reply format real backends ask for: delimiter lines no SKILL.md plausibly contains.
FILE_START = re.compile(r"^=== FILE: (?P<path>.+?) ===\s*$")
FILE_END = "=== END FILE ==="
RATIONALE_START = "=== RATIONALE ==="
RATIONALE_END = "=== END RATIONALE ==="

_SYSTEM = f"""You improve an agent skill: a folder whose SKILL.md instructs a model doing tasks.
You get the skill's files, the train tasks the current version fails (with the judge's details),
your previous change, and lessons from earlier runs. Rewrite the skill so those tasks pass
without overfitting: the skill is also checked on tasks you never see, so write general rules,
not answers to the shown prompts. You may edit SKILL.md and other files of the skill folder;
paths are relative to the folder; never edit tests or task suites.

Reply in exactly this format, nothing else:
{RATIONALE_START}
one short paragraph: what you changed and why
{RATIONALE_END}
=== FILE: SKILL.md ===
the complete new content of the file
{FILE_END}

Repeat the FILE block for every file you change, with its complete content. Omit unchanged files.
"""


@dataclass(frozen=True)
class ImproverPrompt:
    system: str
    user: str


def build_improver_prompt(
    skill_files: Mapping[str, str], feedback: Feedback, learnings: Sequence[str]
) -> ImproverPrompt:
    """The system and user messages for a model-backed improver. SKILL.md is always shown in
    full; other files up to MAX_SHOWN_FILE_CHARS each (longer ones by name only)."""
    parts = ["## Current skill files"]
    for path in sorted(skill_files, key=lambda p: (p != SKILL_FILE, p)):
        text = skill_files[path]
        if path != SKILL_FILE and len(text) > MAX_SHOWN_FILE_CHARS:
            parts.append(f"=== FILE: {path} === ({len(text)} characters, not shown)")
            continue
        parts += [f"=== FILE: {path} ===", text.rstrip("\n"), FILE_END]
    if learnings:
        parts += ["", "## Lessons from earlier runs"] + [f"- {x}" for x in learnings]
    parts += ["", "## Feedback", feedback.render()]
    return ImproverPrompt(_SYSTEM, "\n".join(parts) + "\n")


def parse_improver_reply(text: str, tokens: int = 0, cost_usd: float = 0.0) -> Proposal:
    """The proposal in a reply written in the FILE/RATIONALE block format.

    Text outside blocks is ignored (models add preambles); a block's content is kept verbatim.
    An unterminated block, a repeated path, an unsafe path or no block at all is an error.
    """
    files: dict[str, str] = {}
    rationale: list[str] = []
    current: str | None = None
    body: list[str] = []
    in_rationale = False
    for number, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        stripped = line.strip()
        if current is not None:
            if stripped == FILE_END:
                files[current] = "\n".join(body) + "\n"
                current, body = None, []
            else:
                body.append(line)
        elif in_rationale:
            if stripped == RATIONALE_END:
                in_rationale = False
            else:
                rationale.append(line)
        elif stripped == RATIONALE_START:
            in_rationale = True
        elif match := FILE_START.match(stripped):
            path = check_path(match["path"].strip())
            if path in files:
                raise ProposalError(f"improver reply line {number}: file {path} given twice")
            current = path
    if current is not None:
        raise ProposalError(f"improver reply: block for {current} has no '{FILE_END}' line")
    if not files:
        raise ProposalError("improver reply: no '=== FILE: <path> ===' block")
    return Proposal(files, "\n".join(rationale).strip(), tokens, cost_usd)
