"""A skill-creator viewer workspace from an artifact (`export-benchmark --workspace DIR`):
skill-creator's eval-viewer (generate_review.py) starts from run folders, not from
benchmark.json alone, so this writes one folder per run in the layout its scripts read:

    DIR/eval-<id>/<with_skill|without_skill>/run-<n>/
        outputs/response.md     the attempt's output text (or its error)
        eval_metadata.json      {eval_id, eval_name, prompt, assertions}
        grading.json            {expectations: [{text, passed, evidence}], summary: {...}}
        timing.json             {total_tokens, duration_ms, total_duration_seconds}

Folder names are built from integers and the two configuration names only: no text from the
artifact ever becomes a path.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core.blobs import read_output
from ..core.paths import atomic_write_text
from ..errors import UsageError


def prepare(directory: Path, force: bool) -> None:
    """An empty folder to write into; a non-empty one only with `force` (then emptied of the
    eval-* folders a previous export wrote, and nothing else)."""
    if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
        raise UsageError(f"{directory}: exists and is not a folder", path=str(directory))
    if directory.is_dir() and any(directory.iterdir()):
        if not force:
            raise UsageError(
                f"{directory}: not empty (use --force to overwrite)", path=str(directory)
            )
        for child in directory.glob("eval-*"):
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
    directory.mkdir(parents=True, exist_ok=True)


def _json(path: Path, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def whole_output(attempt: Mapping[str, Any], run_dir: Path | None) -> str:
    """The attempt's output, whole from the run's blob store when the artifact holds a
    preview (the preview when the blob is not on this machine)."""
    try:
        return read_output(attempt, run_dir)
    except OSError:
        return str(attempt.get("output") or "")


def write_workspace(
    directory: Path,
    runs: Sequence[Mapping[str, Any]],
    attempts: Sequence[Mapping[str, Any]],
    prompts: Mapping[str, str],
    *,
    force: bool = False,
    run_dir: Path | None = None,
) -> int:
    """Write one run folder per benchmark run (`runs[i]` is the run of `attempts[i]`);
    `prompts` maps task ids to prompts; a previewed output is read whole from its blob under
    `run_dir` when it is there. Returns the number of run folders written."""
    prepare(directory, force)
    for run, attempt in zip(runs, attempts, strict=True):
        folder = (
            directory
            / f"eval-{int(run['eval_id'])}"
            / str(run["configuration"])
            / f"run-{int(run['run_number'])}"
        )
        (folder / "outputs").mkdir(parents=True, exist_ok=True)
        text = whole_output(attempt, run_dir)
        if attempt.get("status") == "error":
            text = f"(this attempt ended in error: {attempt.get('error')})\n\n{text}"
        atomic_write_text(folder / "outputs" / "response.md", text)
        expectations = list(run["expectations"])
        _json(
            folder / "eval_metadata.json",
            {
                "eval_id": run["eval_id"],
                "eval_name": run["eval_name"],
                "prompt": prompts.get(str(run["eval_name"]), ""),
                "assertions": [e["text"] for e in expectations],
            },
        )
        result = run["result"]
        _json(
            folder / "grading.json",
            {
                "expectations": expectations,
                "summary": {k: result[k] for k in ("passed", "failed", "total", "pass_rate")},
                "timing": {"total_duration_seconds": result["time_seconds"]},
                "execution_metrics": {
                    "total_tool_calls": result["tool_calls"],
                    "errors_encountered": result["errors"],
                },
            },
        )
        _json(
            folder / "timing.json",
            {
                "total_tokens": result["tokens"],
                "duration_ms": int(attempt.get("duration_ms") or 0),
                "total_duration_seconds": result["time_seconds"],
            },
        )
    return len(runs)
