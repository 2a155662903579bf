"""An executor's own options: each executor declares them as its config dataclass and that
config's JSON Schema (`ExecutorSpec.config_cls` / `.schema`), so a plugin executor is as
configurable as a built-in one.

They come from three places, later beating earlier: the project config file's
`[tool.skill-eval.executor.NAME]` table (for executor NAME only), the shorthand flags
(`--max-tokens`, `--claude-bin`, ...: each sets one option), and `--executor-option KEY=VALUE`
(repeatable). Each value is checked against the chosen executor's schema: an unknown key or a
bad value is one line naming where it came from and the executor's valid options. A shorthand
flag the chosen executor does not have is an error too, not silently ignored.

`executor_config` turns a plan into the executor's config object, adding what the run itself
supplies (skill mode, model, --concurrency, the version cache under the state root).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.validation import did_you_mean, schema_problems
from ..errors import ExecutorError, UsageError
from ..executors.base import ExecutorSpec, get_executor_spec
from ..executors.claude.binary import VERSION_CACHE_NAME

if TYPE_CHECKING:
    from .run_plan import RunPlan

# Options every executor has, set by their own flags (--model, --skill-mode) for all alike.
COMMON = {"model": "--model", "skill_mode": "--skill-mode"}
# Options a plan never sets: the plan is written to run.json, and `env` holds credentials.
RESERVED = {
    "env": "an executor's environment (API keys) comes from the process environment, never "
    "from options (run.json keeps the options)",
    # The artifact and the summary report the run's jail: an option must not change it unseen.
    "jail": "the jail is the run's: pass --no-jail to run without one (the summary and the "
    "artifact then say so)",
}


@dataclass(frozen=True)
class Shorthand:
    """A flag of `skill-eval run` that sets one executor option: `param` (the flag's Python
    name) gives `option` the value `convert(flag value)`. `grader`: the judges' grader uses
    the option too (when the judge executor has it), so a judge executor that has it is
    enough."""

    param: str
    option: str
    convert: Callable[[Any], Any] = lambda value: value
    grader: bool = False

    @property
    def flag(self) -> str:
        return "--" + self.param.replace("_", "-")


SHORTHANDS: tuple[Shorthand, ...] = (
    Shorthand("max_tokens", "max_tokens"),
    Shorthand("temperature", "temperature"),
    Shorthand("price_file", "price_file"),
    Shorthand("base_url", "base_url"),
    Shorthand("batch", "batch"),
    Shorthand("fixed_concurrency", "adaptive_concurrency", lambda fixed: not fixed),
    Shorthand("claude_bin", "claude_bin", grader=True),
    Shorthand("max_turns", "max_turns"),
    Shorthand("trigger_model", "trigger_model"),
    Shorthand("allowed_tools", "allowed_tools", list),
    Shorthand("unsandboxed_bash", "unsandboxed_bash"),
    Shorthand("mock_outputs", "mock_outputs"),
    Shorthand("mock_rules", "mock_rules"),
)
SHORTHAND_PARAMS = frozenset(s.param for s in SHORTHANDS)


def given(value: Any) -> bool:
    """Whether a shorthand flag was given: unset flags are None, False or empty."""
    return value is not None and value is not False and value != () and value != []


@dataclass(frozen=True)
class Source:
    """Where a value came from, for messages: `--executor-option max_tokens=x`, the flag
    `--max-tokens`, or a config file's key (`path:line`, and its table)."""

    label: str
    path: str | None = None
    line: int | None = None

    def say(self, message: str) -> str:
        where = f"{self.path}:{self.line}" if self.path and self.line else self.path
        return f"{where}: {self.label}: {message}" if where else f"{self.label}: {message}"


def option_schemas(spec: ExecutorSpec) -> dict[str, Any]:
    """The options a plan may set: the executor's schema's properties but the common and
    reserved ones."""
    properties = spec.schema.get("properties") or {}
    return {k: v for k, v in properties.items() if k not in COMMON and k not in RESERVED}


def _options_list(spec: ExecutorSpec) -> str:
    names = sorted(option_schemas(spec))
    return ", ".join(names) if names else "none"


def parse_option(text: str) -> tuple[str, str]:
    """KEY and the VALUE of `KEY=VALUE` from the command line (`_readings` reads VALUE)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise UsageError(f"--executor-option {text!r}: must be KEY=VALUE (e.g. max_tokens=2048)")
    return key, raw


def _readings(raw: str) -> list[Any]:
    """What a command-line VALUE may mean, best guess first; the first the schema accepts
    is taken (so `model_tag=123` stays the string a string option wants)."""
    import yaml  # only when --executor-option is given

    try:
        parsed = yaml.safe_load(raw) if raw.strip() else raw
    except yaml.YAMLError:
        parsed = raw
    scalar = parsed is None or isinstance(parsed, str | int | float | bool)
    if not scalar and not (
        isinstance(parsed, list) and all(isinstance(v, str | int | float | bool) for v in parsed)
    ):
        parsed = raw  # a mapping or a nested list: not a VALUE this flag takes
    readings = [parsed, raw]
    if scalar and parsed is not None:
        readings.append([parsed])  # one item of a list option: allowed_tools=Read
    return readings


def check_option(spec: ExecutorSpec, key: str, values: list[Any], source: Source) -> Any:
    """The first of `values` (readings of one option) that `spec`'s schema accepts for
    `key`; a UsageError naming `source` when the key is unknown or none fits."""
    schemas = option_schemas(spec)
    if key in RESERVED:
        raise UsageError(source.say(f"{key} cannot be set: {RESERVED[key]}"))
    if key in COMMON:
        raise UsageError(
            source.say(f"{key} is common to every executor: set it with {COMMON[key]}")
        )
    if key not in schemas:
        raise UsageError(
            source.say(
                f"the {spec.name!r} executor has no option {key!r}"
                f"{did_you_mean(key, schemas)}; its options: {_options_list(spec)}"
            )
        )
    one = {"type": "object", "properties": {key: schemas[key]}}
    problems: list[str] = []
    for value in values:
        if not _is_json(value):  # a TOML date, NaN: run.json could not keep it
            problems.append(f"must be plain JSON data, got {type(value).__name__} {value!r}")
            continue
        found = schema_problems({key: _jsonable(value)}, one)
        if not found:
            return _jsonable(value)  # run.json keeps it
        problems.append(found[0].message)
    raise UsageError(source.say(f"{problems[0]} (option {key!r} of the {spec.name!r} executor)"))


def _is_json(value: Any) -> bool:
    """Plain JSON data (what run.json stores): scalars, lists and string-keyed objects; no
    NaN or infinity (a schema's range lets NaN through: every comparison with it is false)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if value is None or isinstance(value, str | int | bool | Path):
        return True
    if isinstance(value, list | tuple):
        return all(_is_json(v) for v in value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return str(value) if isinstance(value, Path) else value


@dataclass(frozen=True)
class ExecutorTable:
    """`[tool.skill-eval.executor.NAME]` of a config file: NAME's options, with the file
    and the line of each key (for messages), and the file's directory (for paths)."""

    name: str
    values: Mapping[str, Any]
    path: str
    lines: Mapping[str, int]


def resolve_options(
    name: str,
    *,
    judge: str | None,
    shorthands: Mapping[str, Any],
    from_config: Iterable[str] = (),
    config_file: str | None = None,
    cli_options: Iterable[str] | Mapping[str, Any] = (),
    table: ExecutorTable | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(executor options, grader options) of a run with executor `name` and judge executor
    `judge`. `shorthands` are the shorthand flags' values by Python name; those named in
    `from_config` came from the top level of `config_file`, so the executor's own table
    beats them, and the command line beats both."""
    spec = _spec(name)
    grader_fields = _config_fields(judge)
    options: dict[str, Any] = {}
    grader: dict[str, Any] = {}
    config_keys = set(from_config)
    chosen = [s for s in SHORTHANDS if given(shorthands.get(s.param))]

    def apply(short: Shorthand) -> None:
        value = short.convert(shorthands[short.param])
        source = Source(short.flag)
        if short.param in config_keys:
            source = Source(f"key {short.flag[2:]!r}", config_file)
        if short.grader and short.option in grader_fields:
            grader[short.option] = _jsonable(value)
        if _sets_executor_option(spec, short, grader_fields, source, short.param in config_keys):
            options[short.option] = check_option(spec, short.option, [value], source)

    for short in chosen:
        if short.param in config_keys:
            apply(short)
    if table is not None:
        options.update(_table_options(spec, table))
    for short in chosen:
        if short.param not in config_keys:
            apply(short)
    options.update(_cli_options(spec, cli_options))
    return options, grader


def _sets_executor_option(
    spec: ExecutorSpec, short: Shorthand, grader_fields: set[str], source: Source, in_config: bool
) -> bool:
    """Whether the shorthand sets an option of the executor; an error when neither the
    executor nor (for grader options) the judges' grader has it."""
    if short.option in option_schemas(spec):
        return True
    if short.grader and short.option in grader_fields:
        return False
    hint = (
        "; an executor's options belong in its table, [tool.skill-eval.executor.NAME], read "
        "only when NAME runs"
        if in_config
        else ""
    )
    raise UsageError(
        source.say(
            f"sets the executor option {short.option!r}, which the {spec.name!r} executor "
            f"does not have; its options: {_options_list(spec)}{hint}"
        )
    )


def check_tables(tables: Iterable[ExecutorTable]) -> None:
    """Every executor table of the config file names an executor and holds only its options,
    whichever executor runs (a typo in another executor's table is found now, not the day
    that executor runs)."""
    for table in tables:
        try:
            spec = get_executor_spec(table.name)
        except ExecutorError as exc:
            source = Source(
                f"[tool.skill-eval.executor.{table.name}]", table.path, table.lines.get("")
            )
            raise UsageError(source.say(str(exc))) from None
        _table_options(spec, table)


def table_options(name: str, table: ExecutorTable | None) -> dict[str, Any]:
    """Executor `name`'s options from its config file table (none without one), checked."""
    return _table_options(_spec(name), table) if table is not None else {}


def _table_options(spec: ExecutorSpec, table: ExecutorTable) -> dict[str, Any]:
    out: dict[str, Any] = {}
    table_name = f"[tool.skill-eval.executor.{table.name}]"
    for key, value in table.values.items():
        source = Source(f"{table_name} {key}", table.path, table.lines.get(key))
        checked = check_option(spec, key, [value], source)
        out[key] = _relative_to(table.path, option_schemas(spec)[key], checked)
    return out


def _relative_to(config_path: str, schema: Mapping[str, Any], value: Any) -> Any:
    """A relative path in a config file is relative to the file (options whose schema says
    `"format": "path"`; `"format": "command"` only when the value has a `/`, a bare name
    being looked up on PATH)."""
    kind = schema.get("format")
    if not isinstance(value, str) or not value or kind not in ("path", "command"):
        return value
    if kind == "command" and "/" not in value:
        return value
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else Path(config_path).parent / path)


def _cli_options(
    spec: ExecutorSpec, given_options: Iterable[str] | Mapping[str, Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(given_options, Mapping):  # from Python: values as they are
        for key, value in given_options.items():
            source = Source(f"executor option {key}")
            out[key] = check_option(spec, str(key), [value], source)
        return out
    for text in given_options:
        key, raw = parse_option(text)
        source = Source(f"--executor-option {text}")
        out[key] = check_option(spec, key, _readings(raw), source)
    return out


def _spec(name: str) -> ExecutorSpec:
    try:
        return get_executor_spec(name)
    except ExecutorError as exc:
        raise UsageError(f"--executor: {exc}") from None


def _config_fields(name: str | None) -> set[str]:
    if name is None:
        return set()
    try:
        return {f.name for f in fields(get_executor_spec(name).config_cls)}
    except ExecutorError:
        return set()


def executor_config(
    plan: RunPlan,
    name: str | None = None,
    skill_mode: str | None = None,
    model: str | None = None,
    *,
    remember_versions: bool = True,
    **extra: Any,
) -> Any:
    """The config object of the plan's executor (or of `name`, another executor an arm runs
    on: its table's options, its own default model): what the run supplies to every
    executor that has the field (skill mode, model, --concurrency, the `claude --version`
    cache under the state root, the jail, --max-retries for the agent's own request
    retries), then the plan's options, then `extra` (values read from files, such as the
    scripted mock outputs). `skill_mode` beats the plan's (an arm's delivery); `model` (an
    arm's `@MODEL`) beats --model and the options' `model`."""
    main = name is None or name == plan.executor.name
    name = plan.executor.name if name is None else name
    spec = get_executor_spec(name)
    known = {f.name for f in fields(spec.config_cls)}
    supplied = {
        "skill_mode": skill_mode or plan.executor.skill_mode,
        "model": plan.executor.model if main else None,
        "concurrency": plan.execution.concurrency,
        # a dry run writes nothing under the state root, not even this cache
        "version_cache": str(Path(plan.records.state_root) / VERSION_CACHE_NAME)
        if remember_versions
        else None,
        "jail": plan.execution.jail,
        # an agent CLI resends a request that failed transiently (counted as api_retries)
        "claude_max_retries": plan.execution.max_retries,
    }
    values = {k: v for k, v in supplied.items() if k in known}
    options = plan.executor.options if main else plan.executor.arm_options.get(name) or {}
    # JSON lists as tuples: a config is frozen (and hashable) like the plan
    own = {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}
    if model is not None:
        if "model" not in known:
            raise UsageError(f"@{model}: the {name!r} executor takes no model")
        own["model"] = model
    return spec.config({**values, **own, **extra})


__all__ = [
    "COMMON",
    "RESERVED",
    "SHORTHANDS",
    "SHORTHAND_PARAMS",
    "ExecutorTable",
    "Shorthand",
    "Source",
    "check_option",
    "check_tables",
    "executor_config",
    "given",
    "option_schemas",
    "parse_option",
    "resolve_options",
    "table_options",
]
