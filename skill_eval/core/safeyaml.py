"""Plain YAML data from untrusted text, with the line of every value.

Nothing here constructs objects from tags: the data is built from the parser's event stream,
so `!!python/...` and any other non-standard tag is refused, never run. Alias bombs are refused
by counting nodes with aliases expanded (each alias adds the size of its anchor in O(1)) and
comparing with the nodes written (ALIAS_RATIO); nesting is bounded, duplicate keys are errors.
Scalars resolve only through PyYAML's safe constructor.

    data, lines = load_yaml_text(text, "suite.yaml")   # raises YamlError
    lines[("tasks", 2, "judge")]                       # -> 1-based line of that key

`read_text_file` does the file half: a size limit checked before reading, strict UTF-8.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver
from yaml.scanner import ScannerError

from ..errors import Problem, ProblemsError
from .utf8 import NotUtf8, utf8_text

MAX_BYTES = 1024 * 1024
# Alias expansion is judged by ratio: the nodes a document holds once aliases are expanded may
# exceed MAX_NODES only up to ALIAS_RATIO times the nodes written in it (a big plain suite,
# 8,300 tasks in 1 MiB, is fine; a billion laughs is not), and never MAX_EXPANDED.
MAX_NODES = 100_000
ALIAS_RATIO = 10
MAX_EXPANDED = 2_000_000
MAX_DEPTH = 100

PathKey = tuple[str | int, ...]
LineMap = dict[PathKey, int]

_Y = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_Y + t for t in ("str", "int", "float", "bool", "null", "timestamp", "binary")}
_SEQ_TAG, _MAP_TAG, _MERGE_TAG, _STR_TAG = _Y + "seq", _Y + "map", _Y + "merge", _Y + "str"
_PLAIN_ONLY = "only plain YAML data is allowed (strings, numbers, booleans, lists, mappings)"
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_RESOLVER = Resolver()
_CONSTRUCTOR = SafeConstructor()


class YamlError(ProblemsError, ValueError):
    """YAML that is unreadable, unsafe or malformed; `problems` lists each one with its line."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems), problems=problems)


class _Node:
    __slots__ = ("kind", "value", "line", "size", "height", "anchor")

    def __init__(self, kind: str, value: Any, line: int, anchor: str | None = None) -> None:
        self.kind = kind  # "scalar" | "seq" | "map" | "merge" (a `<<` key)
        self.value = value  # scalar: the constructed value; seq/map: list of child nodes
        self.line = line
        self.size = 1  # nodes in this subtree, aliases expanded
        self.height = 1
        self.anchor = anchor


def render_path(parts: Iterable[str | int]) -> str:
    """`("tasks", 2, "judge")` -> `tasks[2].judge`, the field syntax problems use."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _show_tag(tag: str) -> str:
    return "!!" + tag[len(_Y) :] if tag.startswith(_Y) else tag


def read_text_file(
    path: str | os.PathLike[str], display: str | None = None, max_bytes: int = MAX_BYTES
) -> tuple[bytes, str]:
    """The bytes and the UTF-8 text of a file, refusing files over `max_bytes` before reading
    them whole. OSError propagates (the caller words "not found"); other problems: YamlError."""
    shown = display if display is not None else os.fspath(path)
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        raw = b"" if size > max_bytes else handle.read(max_bytes + 1)
    if size > max_bytes or len(raw) > max_bytes:
        raise YamlError(
            [
                Problem(
                    shown,
                    f"file is too large ({max(size, len(raw))} bytes; "
                    f"the limit is {max_bytes} bytes)",
                )
            ]
        )
    try:
        return raw, utf8_text(raw)
    except NotUtf8 as exc:
        raise YamlError([Problem(shown, str(exc), line=exc.line)]) from None


def load_yaml_text(
    text: str, path: str, *, max_nodes: int = MAX_NODES, max_depth: int = MAX_DEPTH
) -> tuple[Any, LineMap]:
    """Parse one YAML document into plain data (dict/list/str/int/float/bool/None; dates as
    the safe loader makes them) and a map from each value's path to its 1-based line.

    A mapping entry's line is its key's line; a list item's is the item's. `path` only names
    the file in problems. An empty document gives `(None, {(): 1})`. Raises YamlError listing
    every problem found (syntax errors and refusals stop the parse where they occur).
    """
    builder = _Builder(path, max_nodes, max_depth)
    data: Any = None
    lines: LineMap = {(): 1}
    root = builder.build(text)  # raises YamlError at once where going on would cost unbounded
    if root is not None:
        lines[()] = root.line
        data = _Converter(path, lines, builder.problems).convert(root, ())
    if builder.problems:
        raise YamlError(builder.problems)
    return data, lines


class _Builder:
    """Events -> a _Node tree, iteratively (no recursion), counting expanded nodes."""

    def __init__(self, path: str, max_nodes: int, max_depth: int) -> None:
        self.path, self.max_nodes, self.max_depth = path, max_nodes, max_depth
        self.problems: list[Problem] = []
        self.total = 0  # nodes with aliases expanded
        self.written = 0  # nodes the document itself holds
        self.stack: list[_Node] = []
        self.root: _Node | None = None
        self.anchors: dict[str, _Node] = {}
        self.open_anchors: set[str] = set()

    def problem(self, message: str, line: int | None) -> None:
        self.problems.append(Problem(self.path, message, line=line))

    def abort(self, message: str, line: int | None) -> YamlError:
        """Stop at once (going on would cost unbounded time or memory), with every problem."""
        self.problem(message, line)
        return YamlError(self.problems)

    def build(self, text: str) -> _Node | None:
        """The root node, or None when the text is empty or not YAML (problems then say why)."""
        documents = 0
        try:
            for event in yaml.parse(text, Loader=_Loader):
                # the parser marks every event; 1 only satisfies the type of start_mark
                line = event.start_mark.line + 1 if event.start_mark is not None else 1
                if isinstance(event, yaml.ScalarEvent):
                    self.add(self.scalar(event, line), line, event.anchor)
                elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
                    is_seq = isinstance(event, yaml.SequenceStartEvent)
                    if event.tag not in (None, "!", _SEQ_TAG if is_seq else _MAP_TAG):
                        self.problem(
                            f"unsupported tag {_show_tag(event.tag)!r}; {_PLAIN_ONLY}", line
                        )
                    node = _Node("seq" if is_seq else "map", [], line, event.anchor)
                    self.add(node, line, None)
                    self.stack.append(node)
                    if event.anchor:
                        self.open_anchors.add(event.anchor)
                elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
                    self.close(self.stack.pop())
                elif isinstance(event, yaml.AliasEvent):
                    target = self.anchors.get(event.anchor or "")  # an alias has a name
                    if target is None:
                        why = (
                            "is used inside its own anchor"
                            if event.anchor in self.open_anchors
                            else "has no anchor"
                        )
                        self.problem(f"alias *{event.anchor} {why}", line)
                        target = _Node("scalar", None, line)
                    self.add(target, line, None, count=target.size)
                elif isinstance(event, yaml.DocumentStartEvent):
                    documents += 1
                    if documents > 1:
                        raise self.abort("expected one YAML document, found several", line)
        except yaml.MarkedYAMLError as exc:
            message, at = describe_syntax_error(exc, text)
            self.problem(message, at)
            return None
        except yaml.YAMLError as exc:  # ReaderError: characters YAML does not allow
            pos = getattr(exc, "position", None)
            at = text.encode("utf-8")[:pos].count(b"\n") + 1 if isinstance(pos, int) else None
            reason = getattr(exc, "reason", None) or str(exc).splitlines()[0]
            self.problem(f"YAML cannot read this file: {reason}", at)
            return None
        return self.root

    def add(self, node: _Node, line: int, anchor: str | None, count: int = 1) -> None:
        """Attach `node` to the open collection (or make it the root), within the limits."""
        self.total += count
        self.written += 1
        limit = min(MAX_EXPANDED, max(self.max_nodes, ALIAS_RATIO * self.written))
        if self.total > limit:
            raise self.abort(
                f"too many YAML nodes (over {limit} once aliases are expanded): "
                f"{self.total // self.written}x the {self.written} written; "
                "refusing what looks like an alias bomb",
                line,
            )
        if len(self.stack) + node.height > self.max_depth:
            raise self.abort(f"nesting deeper than {self.max_depth} levels", line)
        if self.stack:
            self.stack[-1].value.append(node)
        else:
            self.root = node
        if anchor:
            self.anchors[anchor] = node

    def close(self, node: _Node) -> None:
        node.size = 1 + sum(child.size for child in node.value)
        node.height = 1 + max((child.height for child in node.value), default=0)
        if node.anchor:
            self.anchors[node.anchor] = node
            self.open_anchors.discard(node.anchor)

    def scalar(self, event: yaml.ScalarEvent, line: int) -> _Node:
        tag = event.tag
        if tag is None or tag == "!":
            # types-PyYAML leaves Resolver.resolve unannotated
            tag = _RESOLVER.resolve(
                ScalarNode,
                event.value,  # type: ignore[no-untyped-call]
                event.implicit,
            )
        if tag == _STR_TAG:  # the common case, and all the safe constructor would do
            return _Node("scalar", event.value, line)
        if tag == _MERGE_TAG:
            parent = self.stack[-1] if self.stack else None
            in_key = parent is not None and parent.kind == "map" and len(parent.value) % 2 == 0
            return _Node("merge" if in_key else "scalar", event.value, line)
        if tag not in _SCALAR_TAGS:
            self.problem(f"unsupported tag {_show_tag(tag)!r}; {_PLAIN_ONLY}", line)
            return _Node("scalar", event.value, line)
        try:
            node = ScalarNode(tag, event.value, style=event.style or None)
            value = _CONSTRUCTOR.yaml_constructors[tag](_CONSTRUCTOR, node)
        except Exception:  # the safe constructor raises ValueError, AttributeError, ...
            shown = event.value if len(event.value) <= 40 else event.value[:37] + "..."
            self.problem(f"cannot read {shown!r} as {_show_tag(tag)}", line)
            value = event.value
        return _Node("scalar", value, line)


def describe_syntax_error(exc: yaml.MarkedYAMLError, text: str) -> tuple[str, int | None]:
    """PyYAML's syntax error in `text` as (one-line message, 1-based line), located where the
    problem starts. The parser marks two places: `context_mark`, where the construct it was
    reading began, and `problem_mark`, where it gave up. For a token left open (a quote, a
    simple key, a block scalar: scanner errors) or a flow collection (`[`, `{`) left open, the
    start is the line to fix: an unclosed quote on line 5 gives up at the end of the file. For
    a block collection the start is the enclosing mapping, maybe line 1, so the line where the
    parser gave up is shown, unless a quoted string that spans lines ends there: that is an
    unclosed quote that the next quote in the file closed, and its first line is the one."""
    context, problem = exc.context, exc.problem or "invalid YAML"
    start, stop = exc.context_mark, exc.problem_mark
    opened = isinstance(exc, ScannerError) or "flow" in (context or "")
    if start is not None and (opened or stop is None):
        same_line = stop is not None and stop.line == start.line
        column = (stop if same_line and stop is not None else start).column + 1
        message = f"YAML syntax error (column {column}): {context}: {problem}"
        if stop is not None and not same_line:
            message += f" at line {stop.line + 1}"
        if "quoted scalar" in (context or "") and "end of stream" in problem:
            message += " (a closing quote is missing)"
        return message, start.line + 1
    if stop is None:
        return f"YAML syntax error: {context or problem}", None
    quote = _quote_spanning_lines(text, stop.line)
    if quote is not None:
        line, column = quote
        return (
            f"YAML syntax error (column {column}): a quoted string opens here and runs "
            f"to line {stop.line + 1}, where {problem}; is its closing quote missing?"
        ), line
    message = f"YAML syntax error (column {stop.column + 1}): {problem}"
    if context and start is not None and start.line != stop.line:
        message += f" ({context} that starts at line {start.line + 1})"
    elif context:
        message += f" ({context})"
    return message, stop.line + 1


def _quote_spanning_lines(text: str, end_line: int) -> tuple[int, int] | None:
    """(1-based line, column) where the last quoted scalar before a syntax error starts, when
    it spans lines and ends on `end_line` (0-based); None otherwise. Parses `text` again up to
    the error."""
    found = None
    try:
        for event in yaml.parse(text, Loader=_Loader):
            start, end = event.start_mark, event.end_mark
            if (
                isinstance(event, yaml.ScalarEvent)
                and event.style in ('"', "'")
                and start is not None
                and end is not None
                and start.line < end.line
            ):
                found = (start.line + 1, start.column + 1) if end.line == end_line else None
    except yaml.YAMLError:
        pass
    return found


class _Converter:
    """_Node tree -> plain data and line map; merges `<<` keys, reports duplicate keys."""

    def __init__(self, path: str, lines: LineMap, problems: list[Problem]) -> None:
        self.path, self.lines, self.problems = path, lines, problems

    def convert(self, node: _Node, at: PathKey) -> Any:
        if node.kind == "seq":
            out = []
            for i, child in enumerate(node.value):
                self.lines[at + (i,)] = child.line
                out.append(self.convert(child, at + (i,)))
            return out
        if node.kind == "map":
            result: dict[str, Any] = {}
            for key, key_line, value in self.entries(node, at):
                self.lines[at + (key,)] = key_line
                result[key] = self.convert(value, at + (key,))
            return result
        return node.value

    def entries(
        self, node: _Node, at: PathKey, report: bool = True
    ) -> list[tuple[str, int, _Node]]:
        """A mapping's (key, key line, value) triples: merged keys first, explicit ones win.
        A merge source reports its own problems where it is defined, so not again here."""
        say = self.problem if report else (lambda *args: None)
        explicit: dict[str, tuple[int, _Node]] = {}
        merged: dict[str, tuple[int, _Node]] = {}
        pairs = node.value
        for key, value in zip(pairs[0::2], pairs[1::2], strict=True):
            if key.kind == "merge":
                sources = value.value if value.kind == "seq" else [value]
                for source in sources:
                    if source.kind != "map":
                        say("'<<' must merge a mapping or a list of mappings", value.line, at)
                        continue
                    for k, k_line, v in self.entries(source, at, report=False):
                        merged.setdefault(k, (k_line, v))
                continue
            if key.kind != "scalar" or not isinstance(key.value, str):
                shown = "a list or mapping" if key.kind != "scalar" else repr(key.value)
                say(f"mapping keys must be strings, got {shown} (quote it)", key.line, at)
                continue
            if key.value in explicit:
                first = explicit[key.value][0]
                say(
                    f"duplicate key {key.value!r} (first defined at line {first})",
                    key.line,
                    at + (key.value,),
                )
                continue
            explicit[key.value] = (key.line, value)
        merged.update(explicit)
        return [(k, line, v) for k, (line, v) in merged.items()]

    def problem(self, message: str, line: int, at: PathKey) -> None:
        self.problems.append(Problem(self.path, message, line=line, field=render_path(at)))


def load_yaml_file(
    path: str | os.PathLike[str],
    display: str | None = None,
    *,
    max_bytes: int = MAX_BYTES,
    max_nodes: int = MAX_NODES,
) -> tuple[bytes, Any, LineMap]:
    """`read_text_file` then `load_yaml_text`: (raw bytes, data, line map)."""
    shown = display if display is not None else os.fspath(path)
    raw, text = read_text_file(Path(path), shown, max_bytes)
    data, lines = load_yaml_text(text, shown, max_nodes=max_nodes)
    return raw, data, lines
