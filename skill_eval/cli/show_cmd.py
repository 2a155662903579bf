"""`skill-eval show RUN_DIR|ARTIFACT`: a run's history as a tree, one attempt per line with
each judge's mark, score and short feedback; `--task ID` shows one task in full."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..errors import UsageError
from .views import echo_lines, markup, rich_console, safe, use_rich

FEEDBACK_CHARS = 140  # room for a pytest judgement's first failing assertion
STATUS_STYLE = {"passed": "green", "failed": "red", "error": "yellow"}


def load(path: Path) -> tuple[str, list[Any]]:
    """(title, tasks) of a run directory (its journal) or an artifact."""
    from ..engine import artifact
    from ..judges.observers import summary_lines
    from ..report.task_details import from_artifact, read_journal
    from ..report.text import one_line

    if path.is_dir():
        if not (path / "run.json").is_file() or not (path / "attempts.jsonl").is_file():
            raise UsageError(f"{path}: not a run directory (no run.json and attempts.jsonl)")
        try:
            meta, tasks = read_journal(path)
        except (OSError, ValueError) as exc:
            raise UsageError(f"{path}: cannot read the run: {exc}") from None
        arms = _arms_note(_at(meta, "arms", "listed"), _at(meta, "plan", "inputs", "reference_arm"))
        return (
            f"run {one_line(meta.get('run_id') or path.name)}  suite "
            f"{one_line(meta.get('task_suite') or '?')}{arms}"
        ), tasks
    data = artifact.read(path)
    verdict = one_line((data.get("evaluation") or {}).get("verdict") or "?").upper()
    observed = "".join(f"\n{one_line(line)}" for line in summary_lines(data.get("observers")))
    arms = _arms_note(_at(data, "arms", "arms"), _at(data, "arms", "reference"))
    return (
        f"run {one_line(data.get('run_id') or '?')}  suite "
        f"{one_line(data.get('task_suite') or '?')}  verdict {verdict}{arms}{observed}"
    ), from_artifact(data, every_arm=True)


def _at(data: Any, *keys: str) -> Any:
    """data[k1][k2]...: None where a level is missing or not an object (a foreign file)."""
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _arms_note(listed: Any, reference: Any) -> str:
    """`  arms a, b, none (reference)` for an --arm run (run.json's or the artifact's list of
    arms), else nothing."""
    from ..report.text import one_line

    if not isinstance(listed, list):
        return ""
    names = [str(a["name"]) for a in listed if isinstance(a, dict) and a.get("name")]
    shown = [f"{n} (reference)" if n == reference else n for n in names]
    return f"  arms {one_line(', '.join(shown))}" if shown else ""


def attempt_line(a: Any) -> str:
    """`#0 passed  ✓ contains 1.00 found all 3 ...`: the attempt and each judge's say, then
    its observers' readings after `~` (never part of the judgement)."""
    from ..judges.observers import reading_text
    from ..report.text import one_line

    marks = "  ".join(
        f"{m.mark} {m.name}"
        + (f" {m.score:.2f}" if m.score is not None else "")
        + (f" {one_line(m.short, FEEDBACK_CHARS)}" if m.short else "")
        for m in a.marks
    )
    observed = " · ".join(
        reading_text(n, r) for n, r in a.observations.items() if isinstance(r, dict)
    )
    return f"#{a.index} {a.status:<6}  {marks}" + (
        f"  ~ {one_line(observed, FEEDBACK_CHARS)}" if observed else ""
    )


def _plain_tree(title: str, tasks: list[Any]) -> None:
    lines = [title]
    for task in tasks:
        lines.append(task.task_id)
        for arm, attempts in task.attempts.items():
            lines.append(f"  {arm}")
            lines += [f"    {attempt_line(a)}" for a in attempts]
    echo_lines(lines)


def _rich_tree(title: str, tasks: list[Any]) -> None:
    from rich.tree import Tree

    tree = Tree(f"[bold]{markup(title)}[/]")
    for task in tasks:
        statuses = {a.status for arm in task.attempts.values() for a in arm}
        style = "red" if "failed" in statuses else "yellow" if "error" in statuses else "green"
        branch = tree.add(f"[bold {style}]{markup(task.task_id)}[/]")
        for arm, attempts in task.attempts.items():
            node = branch.add(arm)
            for a in attempts:
                node.add(f"[{STATUS_STYLE.get(a.status, 'dim')}]{markup(attempt_line(a))}[/]")
    rich_console().print(tree)


def output_text(a: Any, full: bool) -> tuple[str, str]:
    """(heading suffix, body) of an attempt's output: the record's text (the preview of a long
    output, naming its blob), or with `full` the whole output read from the blob."""
    cut = (
        f"; cut at --max-output-bytes from {a.output_cut_from} bytes"
        if a.output_cut_from is not None
        else ""
    )
    if a.output_blob is None:
        return cut and f" ({cut[2:]})", safe(a.output)
    if full:
        try:
            return f" (whole, {a.output_size} bytes{cut})", safe(a.full_output())
        except OSError as exc:
            return f" (preview: the whole is unreadable: {exc}{cut})", safe(a.output)
    return (
        f" (preview of {a.output_size} bytes{cut}; --full shows the whole, kept in "
        f"{safe(a.output_blob)})"
    ), safe(a.output)


def task_text(task: Any, full: bool = False) -> list[tuple[str, str]]:
    """(heading, body) sections of one task in full: prompt, then per attempt its output (the
    whole of long ones only with `full`), the judgement, findings, observers, changed files
    and transcript."""
    from ..judges.observers import reading_text

    sections = [("prompt", safe(task.prompt) if task.prompt else "(the suite is not readable)")]
    for arm, attempts in task.attempts.items():
        for a in attempts:
            head = f"{arm} #{a.index}: {a.status}" + (
                f", score {a.score:.2f}" if a.score is not None else ""
            )
            suffix, body = output_text(a, full)
            sections.append((head + " - output" + suffix, body))
            judgement = [attempt_line(a)] if len(a.marks) > 1 else []  # a composite's parts
            judgement.append(safe(a.details))
            judgement += [f"[{safe(f.get('severity'))}] {safe(f.get('title'))}" for f in a.findings]
            judgement += [f"{safe(d.get('name'))} {safe(d.get('score'))}" for d in a.dimensions]
            sections.append((head + " - judgement", "\n".join(judgement)))
            if a.observations:  # non-gating: shown apart from the judgement
                sections.append(
                    (
                        head + " - observers (not gating)",
                        "\n".join(
                            safe(reading_text(n, r))
                            for n, r in a.observations.items()
                            if isinstance(r, dict)
                        ),
                    )
                )
            if a.files:
                sections.append(
                    (
                        head + " - changed files",
                        "\n".join(
                            f"{safe(f.get('path'))} ({safe(f.get('size'))} bytes)" for f in a.files
                        ),
                    )
                )
            if a.transcript:
                shown = (
                    f" (first and last {len(a.transcript) // 2} of {a.transcript_calls} calls)"
                    if a.transcript_calls
                    else ""
                )
                sections.append(
                    (
                        head + " - transcript" + shown,
                        "\n".join(
                            f"{'ok ' if c.get('ok', True) else 'ERR'} {safe(c.get('name'))} "
                            f"{safe(json.dumps(c.get('input'), ensure_ascii=False))}"
                            + (f"\n      {safe(c.get('output'))}" if c.get("output") else "")
                            for c in a.transcript
                        ),
                    )
                )
    return sections


def _show_task(title: str, task: Any, rich: bool, full: bool) -> None:
    sections = task_text(task, full)
    if not rich:
        lines = [title, f"task {task.task_id}"]
        for heading, body in sections:
            lines += ["", f"== {heading}", body.rstrip("\n")]
        echo_lines(lines)
        return
    from rich.panel import Panel

    console = rich_console()
    console.print(f"[bold]{markup(title)}[/]\ntask [bold]{markup(task.task_id)}[/]")
    for heading, body in sections:
        console.print(
            Panel(markup(body.rstrip("\n")) or " ", title=markup(heading), title_align="left")
        )


@click.command("show")
@click.argument("path", metavar="RUN_DIR|ARTIFACT", type=click.Path(path_type=Path))
@click.option(
    "--task",
    "task_id",
    metavar="ID",
    help="Show this task in full: prompt, every output, the judgement and the transcript.",
)
@click.option("--plain", is_flag=True, help="Plain text even on a terminal.")
@click.option(
    "--full",
    is_flag=True,
    help="With --task: long outputs in full, read from the "
    "run's blobs (by default their preview: first and last characters).",
)
def command(path: Path, task_id: str | None, plain: bool, full: bool) -> None:
    """Show a run: every task, one attempt per line with each judge's mark (✓ passed,
    ✗ failed, ! error), score and short feedback.

    RUN_DIR is a run directory under <state-root>/runs (its journal, also of a run that
    stopped); ARTIFACT is the JSON written by `run`.

    Exit codes: 0 shown, 2 unreadable input or unknown task.
    """
    if not path.exists():
        raise UsageError(f"{path}: no such file or directory", path=str(path))
    title, tasks = load(path)
    rich = use_rich(plain)
    if task_id is None:
        (_rich_tree if rich else _plain_tree)(title, tasks)
        return
    found = next((t for t in tasks if t.task_id == task_id), None)
    if found is None:
        known = ", ".join(t.task_id for t in tasks[:20]) or "none"
        raise UsageError(f"--task {task_id}: no such task in {path} (tasks: {known})")
    _show_task(title, found, rich, full)
