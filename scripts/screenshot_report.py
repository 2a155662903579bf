"""Regenerate docs/report-screenshot.png, the README's picture of the HTML report: run the demo
offline (mock executor, 2 samples), render `skill-eval report --format html`, and photograph
it with headless Chromium (the OS package; SKILL_EVAL_CHROMIUM names another binary), one
task opened to show the arms side by side and the word diff.

    python scripts/screenshot_report.py [--output docs/report-screenshot.png] [--keep-html F]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def chromium() -> str:
    found = os.environ.get("SKILL_EVAL_CHROMIUM") or next(
        (p for n in ("chromium", "chromium-browser", "google-chrome") if (p := shutil.which(n))),
        None,
    )
    if not found:
        sys.exit("chromium not found: apt-get install chromium (or set SKILL_EVAL_CHROMIUM)")
    return found


def skill_eval(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "skill_eval.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if not done.stdout.strip() and done.returncode != 0:
        sys.exit(f"skill-eval {args[0]} failed: {done.stderr.strip()}")
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(REPO / "docs" / "report-screenshot.png"))
    parser.add_argument("--keep-html", metavar="FILE", help="Also keep the rendered report.")
    parser.add_argument("--size", default="1280,1100", help="Window size WIDTH,HEIGHT.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="skill-eval-shot-") as tmp:
        artifact = skill_eval(
            "run",
            "--standalone",
            "--task-suite",
            "task_suites/demo/task_suite.yaml",
            "--skill-path",
            "fixtures/demo-skill-improved",
            "--mock",
            "--mock-outputs",
            "task_suites/demo/mock_outputs.yaml",
            "--samples",
            "2",
            "--policy",
            "delta",
            "--state-root",
            tmp,
            "-q",
        ).strip()
        html = Path(args.keep_html or Path(tmp) / "report.html").resolve()
        skill_eval("report", artifact, "--format", "html", "-o", str(html))
        output = Path(args.output).resolve()
        output.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                chromium(),
                *FLAGS,
                f"--user-data-dir={tmp}/profile",
                f"--window-size={args.size}",
                f"--screenshot={output}",
                html.as_uri() + "#task=breaking-change",
            ],
            cwd=tmp,
            check=True,
            capture_output=True,
            timeout=120,
        )
    print(output)


if __name__ == "__main__":
    main()
