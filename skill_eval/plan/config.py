"""Project defaults for `skill-eval run`, read from `[tool.skill-eval]` in a `pyproject.toml`
or from the top level of a `skill-eval.toml`, so a team writes its usual flags once.

Keys are the long flag names of `skill-eval run` (`executor = "anthropic"`, `concurrency = 4`,
`baseline-cache-dir = ".cache/baselines"`). The command line beats the file; relative paths
in the file are relative to the file's directory. Unknown keys and values of the wrong type
are errors naming the file, line and key, every one reported at once.

The arms of a run that compares agents and deliveries (`--arm`) may be a table,
`[tool.skill-eval.arms]` (in a skill-eval.toml: `[arms]`), `NAME = "EXECUTOR:DELIVERY"` or
`NAME = {executor = "...", delivery = "..."}` each.

An executor's own options go in its table, `[tool.skill-eval.executor.NAME]` (in a
skill-eval.toml: `[executor.NAME]`), read only when NAME runs and checked against NAME's
schema (plan/executor_options.py). With such tables the executor's name is `executor.name`
(TOML cannot make `executor` both a string and a table).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ..core.validation import did_you_mean
from ..errors import ConfigError, Problem
from .arms import config_arms
from .executor_options import ExecutorTable

CONFIG_FILE_NAME = "skill-eval.toml"
PYPROJECT = "pyproject.toml"
TABLE = "tool.skill-eval"
# Flags that are not defaults: which file to read, and whether to read one.
NOT_KEYS = frozenset({"config", "no-config", "help"})
# Flags naming files or directories: a relative value is relative to the config file.
PATH_KEYS = frozenset(
    {
        "task-suite",
        "state-root",
        "input",
        "skill-path",
        "baseline-skill",
        "mock-outputs",
        "price-file",
        "output",
        "baseline-cache-dir",
        "judge-cache-dir",
        "evaluators-dir",
        "resume",
        "claude-bin",
        "journal-key",
    }
)
# String flags that take a comma-separated list: the file may give a TOML list instead.
LIST_KEYS = frozenset({"allowed-tools"})


@dataclass(frozen=True)
class ProjectConfig:
    """A config file's values, keyed by flag name, with the line each key is on."""

    path: Path
    values: Mapping[str, Any]
    lines: Mapping[str, int]


def _has_table(data: Mapping[str, Any]) -> bool:
    tool = data.get("tool")
    return isinstance(tool, Mapping) and "skill-eval" in tool


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc}", path=str(path)) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message carries the line and column
        hint = ""
        if _NAMED_EXECUTOR.search(text) and _EXECUTOR_TABLE.search(text):
            hint = (
                "; with executor tables ([tool.skill-eval.executor.NAME]) name the executor "
                'as executor.name = "NAME": TOML cannot make `executor` a string and a table'
            )
        raise ConfigError(f"{path}: not valid TOML: {exc}{hint}", path=str(path)) from None


_NAMED_EXECUTOR = re.compile(r"^\s*executor\s*=", re.M)
_EXECUTOR_TABLE = re.compile(r"^\s*\[[^\]]*executor\s*\.", re.M)


def find_config(start: Path) -> Path | None:
    """The nearest config file from `start` upwards: a `skill-eval.toml`, or a
    `pyproject.toml` that has a `[tool.skill-eval]` table (one without is passed over).
    In one directory `skill-eval.toml` wins."""
    start = start.resolve()
    for directory in (start, *start.parents):
        own = directory / CONFIG_FILE_NAME
        if own.is_file():
            return own
        project = directory / PYPROJECT
        if project.is_file() and _has_table(_read_toml(project)):
            return project
    return None


def key_lines(text: str, in_pyproject: bool) -> dict[str, int]:
    """The 1-based line of each key of our table (tomllib gives values, not positions):
    in a pyproject.toml the lines after the `[tool.skill-eval]` header up to the next header,
    in a skill-eval.toml the lines before the first header (and each table's header: a key
    of the top level)."""
    header = re.compile(r"^\s*\[\s*tool\s*\.\s*(?:skill-eval|\"skill-eval\"|'skill-eval')\s*\]")
    any_header = re.compile(r"^\s*\[")
    key = re.compile(r"""^\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_-]+))\s*[=.]""")
    inside = not in_pyproject
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if any_header.match(line):
            inside = in_pyproject and header.match(line) is not None
            own = re.match(r"^\s*\[\[?\s*[\"']?([A-Za-z0-9_-]+)", line)
            if not in_pyproject and own:  # a table such as [arms] is a key of ours
                lines.setdefault(own.group(1), number)
            if not inside and in_pyproject:
                # a sub-table such as [tool.skill-eval.x] is a key of ours, named `x`
                sub = re.match(
                    r"^\s*\[\s*tool\s*\.\s*[\"']?skill-eval[\"']?\s*\.\s*"
                    r"[\"']?([A-Za-z0-9_-]+)",
                    line,
                )
                if sub:
                    lines.setdefault(sub.group(1), number)
            continue
        if inside:
            found = key.match(line)
            if found:
                lines.setdefault(next(g for g in found.groups() if g), number)
    return lines


def load_config(path: Path) -> ProjectConfig:
    """Read one config file (either kind); raises ConfigError when it cannot be read, is not
    TOML, or is a pyproject.toml without a `[tool.skill-eval]` table."""
    path = path.resolve()
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}", path=str(path))
    data = _read_toml(path)
    in_pyproject = path.name == PYPROJECT
    if in_pyproject:
        if not _has_table(data):
            raise ConfigError(f"{path}: has no [{TABLE}] table", path=str(path))
        values = data["tool"]["skill-eval"]
        if not isinstance(values, Mapping):
            raise ConfigError(f"{path}: [{TABLE}] must be a table", path=str(path))
    else:
        values = data
    text = path.read_text(encoding="utf-8")
    return ProjectConfig(path, dict(values), key_lines(text, in_pyproject))


def _flags(command: click.Command) -> dict[str, click.Option]:
    """Long flag name -> its option, for every flag that may have a default in the file."""
    out: dict[str, click.Option] = {}
    for param in command.params:
        if isinstance(param, click.Option):
            for opt in param.opts:
                if opt.startswith("--") and opt[2:] not in NOT_KEYS:
                    out[opt[2:]] = param
    return out


def _kind(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a table",
    }.get(type(value), type(value).__name__)


def _convert(key: str, option: click.Option, value: Any, base: Path) -> tuple[Any, str | None]:
    """The value click should take as the flag's default, or a reason it is the wrong type."""
    if option.is_flag:
        return (value, None) if isinstance(value, bool) else (None, "must be true or false")
    if option.multiple or key in LIST_KEYS:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            return None, "must be a string or a list of strings"
        items = [_path(key, v, base) for v in items]
        return (items if option.multiple else ",".join(items)), None
    kind = option.type
    if isinstance(kind, click.types.IntParamType):
        ok = isinstance(value, int) and not isinstance(value, bool)
        return (value, None) if ok else (None, "must be an integer")
    if isinstance(kind, click.types.FloatParamType):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return (float(value), None) if ok else (None, "must be a number")
    if not isinstance(value, str):
        return None, "must be a string"
    if isinstance(kind, click.Choice) and value not in kind.choices:
        choices = [str(c) for c in kind.choices]
        return None, f"must be one of {', '.join(choices)}{did_you_mean(value, choices)}"
    return _path(key, value, base), None


def _path(key: str, value: str, base: Path) -> str:
    """Paths in the file are relative to the file; a bare `claude-bin` name stays a name
    looked up on PATH, and `resume = ""` (the latest run) stays empty."""
    if key not in PATH_KEYS or not value or (key == "claude-bin" and "/" not in value):
        return value
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


def command_defaults(command: click.Command, config: ProjectConfig) -> dict[str, Any]:
    """The `default_map` of `command` from a config file: {parameter name: value}. Raises
    ConfigError listing every unknown key and every value of the wrong type."""
    flags = _flags(command)
    problems: list[Problem] = []
    defaults: dict[str, Any] = {}
    for key, value in config.values.items():
        line = config.lines.get(key)
        if key == EXECUTOR_KEY and isinstance(value, Mapping):  # names and tables
            name = value.get("name")
            if name is None:
                continue
            value = name
        if key in (ARMS_KEY, "arm") and "arm" in flags:  # --arm, as a list or a table
            arms, error = _arms(config, key, value)
            if error is not None:
                problems.append(Problem(str(config.path), error, line=line))
            else:
                defaults[str(flags["arm"].name)] = arms
            continue
        option = flags.get(key)
        if option is None:
            message = f"unknown key {key!r}{did_you_mean(key.replace('_', '-'), flags)}"
            problems.append(
                Problem(
                    str(config.path),
                    message + "; keys are the long flag names of `skill-eval run`",
                    line=line,
                )
            )
            continue
        converted, error = _convert(key, option, value, config.path.parent)
        if error is not None:
            problems.append(
                Problem(
                    str(config.path), f"{error}, got {_kind(value)} {value!r}", line=line, field=key
                )
            )
            continue
        defaults[str(option.name)] = converted
    if problems:
        raise ConfigError(
            f"{config.path}: invalid config", path=str(config.path), problems=problems
        )
    return defaults


EXECUTOR_KEY = "executor"
ARMS_KEY = "arms"  # [tool.skill-eval.arms]: NAME = "EXECUTOR:DELIVERY" or {executor, delivery}


def _arms(config: ProjectConfig, key: str, value: Any) -> tuple[list[str], str | None]:
    """The `--arm` values of the file's `arm` list or `arms` table, or why they are not."""
    if ARMS_KEY in config.values and "arm" in config.values:  # said once, at the table
        both = "arms: give the arms once, as an `arms` table or an `arm` list, not both"
        return [], both if key == ARMS_KEY else None
    value = [value] if key == "arm" and isinstance(value, str) else value
    if key == "arm" and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        return [], f"arm: must be a string or a list of strings, got {_kind(value)} {value!r}"
    return config_arms(value, key)


def executor_tables(config: ProjectConfig) -> list[ExecutorTable]:
    """The executor tables of a config file (`[tool.skill-eval.executor.NAME]`), each with
    the line of each of its keys. Raises ConfigError when `executor` holds a key that is
    neither `name` nor a table."""
    value = config.values.get(EXECUTOR_KEY)
    if not isinstance(value, Mapping):
        return []
    text = config.path.read_text(encoding="utf-8")
    in_pyproject = config.path.name == PYPROJECT
    tables, problems = [], []
    for name, options in value.items():
        if name == "name":
            continue
        lines = table_key_lines(text, in_pyproject, str(name))
        if not isinstance(options, Mapping):
            message = (
                f"must be a table of executor {name!r}'s options ([{TABLE}.executor.{name}]), "
                f"got {_kind(options)} {options!r}"
            )
            line = lines.get("") or config.lines.get(EXECUTOR_KEY)
            problems.append(Problem(str(config.path), message, line=line, field=f"executor.{name}"))
            continue
        tables.append(ExecutorTable(str(name), dict(options), str(config.path), lines))
    if problems:
        raise ConfigError(
            f"{config.path}: invalid config", path=str(config.path), problems=problems
        )
    return tables


def table_key_lines(text: str, in_pyproject: bool, name: str) -> dict[str, int]:
    """The 1-based line of each key of executor `name`'s table, and of its header (key "")."""
    quoted = rf"(?:{re.escape(name)}|\"{re.escape(name)}\"|'{re.escape(name)}')"
    prefix = r"tool\s*\.\s*[\"']?skill-eval[\"']?\s*\.\s*" if in_pyproject else ""
    header = re.compile(rf"^\s*\[\s*{prefix}executor\s*\.\s*{quoted}\s*\]")
    key = re.compile(r"""^\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_-]+))\s*=""")
    inside = False
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("["):
            inside = header.match(line) is not None
            if inside:
                lines.setdefault("", number)
            continue
        found = key.match(line) if inside else None
        if found:
            lines.setdefault(next(g for g in found.groups() if g), number)
    return lines


def nearest_executor_tables(cwd: Path) -> list[ExecutorTable]:
    """The executor tables of the config file nearest `cwd` (none without one): what
    `improve` and `review` configure their evaluations' executor from, as `run` does."""
    path = find_config(cwd)
    return executor_tables(load_config(path)) if path is not None else []


def chosen_config(args: Sequence[str], cwd: Path) -> Path | None:
    """The config file a command line asks for: `--config FILE`, none with `--no-config`,
    else the nearest one from `cwd` upwards. Read before click parses the line, because the
    file supplies the defaults click fills in."""
    named: str | None = None
    for i, arg in enumerate(args):
        if arg == "--":
            break
        if arg == "--no-config":
            return None
        if arg == "--config" and i + 1 < len(args):
            named = args[i + 1]
        elif arg.startswith("--config="):
            named = arg.split("=", 1)[1]
    if named is not None:
        return Path(named).expanduser().resolve()
    return find_config(cwd)


__all__ = [
    "ARMS_KEY",
    "CONFIG_FILE_NAME",
    "EXECUTOR_KEY",
    "ProjectConfig",
    "chosen_config",
    "command_defaults",
    "executor_tables",
    "find_config",
    "key_lines",
    "nearest_executor_tables",
    "load_config",
    "table_key_lines",
]
