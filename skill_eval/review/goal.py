"""What a review starts from: the skill (SKILL.md and its files), its vision, and the role
prompts. The goal is the one thing every stage may see besides the previous stage's output.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..improve.folders import FolderError, read_skill_folder
from ..skills import SKILL_FILE, load_skill
from ..skills.plans import read_frontmatter

ROLES = ("orchestrator", "builder", "visionary")
ROLES_DIR = Path(__file__).resolve().parent / "roles"
MAX_SHOWN_FILE_CHARS = 20_000


@dataclass(frozen=True)
class Goal:
    """The skill under review and what it is for. `files` (the submission) go to the
    orchestrator only; the other stages get `brief()`: the skill's name and the vision."""

    skill_name: str
    skill_path: Path
    vision: str
    vision_source: str
    files: dict[str, str]

    def brief(self) -> str:
        return (
            f"## Goal\nSkill under review: `{self.skill_name}`\n\n### Vision\n"
            f"{self.vision.strip()}\n"
        )

    def with_files(self) -> str:
        parts = [self.brief(), "## The skill's files"]
        for path in sorted(self.files, key=lambda p: (p != SKILL_FILE, p)):
            text = self.files[path]
            if path != SKILL_FILE and len(text) > MAX_SHOWN_FILE_CHARS:
                parts.append(f"=== FILE: {path} === ({len(text)} characters, not shown)")
                continue
            parts += [f"=== FILE: {path} ===", text.rstrip("\n"), "=== END FILE ==="]
        return "\n".join(parts) + "\n"


def read_goal(skill_path: str | Path, vision_file: str | Path | None = None) -> Goal:
    """Load the skill (checked as `skill-eval run` checks it) and its vision: the `--vision`
    file, else the SKILL.md frontmatter description. UsageError when there is no vision."""
    skill = load_skill(skill_path)
    if skill.directory is not None:
        try:
            files, _ = read_skill_folder(skill.directory)
        except FolderError as exc:
            raise UsageError(str(exc)) from None
    else:
        files = {SKILL_FILE: skill.content}
    if vision_file is not None:
        try:
            vision = Path(vision_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(
                f"--vision {vision_file}: cannot read: {exc}".splitlines()[0]
            ) from None
        source = str(vision_file)
        if not vision.strip():
            raise UsageError(f"--vision {vision_file}: the file is empty")
    else:
        vision = str((read_frontmatter(skill.content) or {}).get("description") or "")
        source = f"{SKILL_FILE} description"
        if not vision.strip():
            raise UsageError(
                f"{skill.origin}: no description to use as the vision; give one with --vision FILE"
            )
    path = skill.directory or Path(skill.origin)
    return Goal(skill.name, path, vision, source, files)


def load_roles(roles_dir: str | Path | None = None) -> dict[str, str]:
    """The system prompt of each role: `<roles_dir>/<role>.md` when it exists, else the one
    shipped in the package. UsageError for a roles dir that is not a directory."""
    override = Path(roles_dir) if roles_dir is not None else None
    if override is not None and not override.is_dir():
        raise UsageError(f"--roles-dir {roles_dir}: not a directory")
    roles: dict[str, str] = {}
    for role in ROLES:
        path = override / f"{role}.md" if override is not None else None
        if path is None or not path.is_file():
            path = ROLES_DIR / f"{role}.md"
        text = path.read_text(encoding="utf-8")
        if not text.strip():
            raise UsageError(f"{path}: the {role} prompt is empty")
        roles[role] = text
    return roles
