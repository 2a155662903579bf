"""The sections of `run --help` after what is evaluated (cli/flag_table.py): how attempts
run, how model-graded judges grade, how attempts become a verdict, what is written and kept,
what it costs, and the console. Each flag is declared here once, as in cli/flag_table.py."""

from __future__ import annotations

from ..core.blobs import DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_PREVIEW_CHARS
from ..core.paths import DEFAULT_STATE_ROOT
from ..executors.base import grader_names
from ..stats.policy import DEFAULT_POLICY, POLICIES
from .choices import Choice, RegistryChoice, is_executor
from .flag_table import Flag, Section, flag

HOW: tuple[Section, ...] = (
    Section(
        "Execution",
        "Where and how attempts run.",
        (
            flag(
                "runner",
                "Where attempts run: a thread pool here, or Ray tasks on a cluster (needs "
                "skill-eval[ray]; --concurrency still caps attempts at once).",
                "--runner",
                type=Choice(["threads", "ray"]),
                default="threads",
                show_default=True,
            ),
            flag(
                "ray-address",
                "--runner ray: the cluster to use (e.g. auto, ray://host:10001; default: start a "
                "local Ray for the run).",
                "--ray-address",
                metavar="ADDRESS",
            ),
            flag(
                "concurrency",
                "Attempts running at once, both arms sharing one pool.",
                "--concurrency",
                type=int,
                default=8,
                show_default=True,
            ),
            flag(
                "max-retries",
                "Retries for rate limits, overload, 5xx, timeouts and transient judge errors (not "
                "for errors a retry cannot heal). An agent CLI resends a failed API request "
                "itself, up to N times, before the attempt is retried.",
                "--max-retries",
                type=int,
                default=5,
                show_default=True,
            ),
            flag(
                "shard",
                "Run only slice I of N of the (task, sample) pairs (both arms of a pair "
                "together), in its own run directory; join the slices with `skill-eval merge` "
                "(see references/ci.md).",
                "--shard",
                metavar="I/N",
            ),
            flag(
                "jail",
                "The jail provider that confines what the candidate controls: auto (the default: "
                "the first that can run here, bubblewrap, then container, then docker; it says "
                "which), bubblewrap, container (Podman; container:IMAGE runs IMAGE), docker (the "
                "Docker CLI, no network at all; docker:IMAGE runs IMAGE: Docker Desktop on macOS "
                "and Windows), or a plugin's (entry points skill_eval.jail_providers). Where none "
                "can run, one line says what to install.",
                "--jail",
                metavar="NAME",
                default=None,
            ),
            flag(
                "no-jail",
                "Run what the candidate controls (the agent and its tools, code a pytest judge "
                "runs on an output) without skill-eval's jail: only where none can be built (no "
                "bubblewrap, no user namespaces, not Linux). The summary says so first, and the "
                "artifact records it.",
                "--no-jail",
                is_flag=True,
            ),
        ),
    ),
    Section(
        "Judging",
        "Model-graded judges.",
        (
            flag(
                "judge-executor",
                "The executor whose model grades the model-graded judges (default: follows "
                "--executor).",
                "--judge-executor",
                default=None,
                type=RegistryChoice(grader_names, lambda n: is_executor(n, grader=True)),
            ),
            flag(
                "judge-model",
                "Model for LLM judges (default: claude-haiku-5-5, a cheap check; [env "
                "SKILL_EVAL_JUDGE_MODEL]).",
                "--judge-model",
                metavar="NAME",
            ),
            flag(
                "judge-cache-dir",
                "Judge cache (default <state-root>/judge-cache).",
                "--judge-cache-dir",
                metavar="DIR",
            ),
            flag("no-judge-cache", "Judge every output afresh.", "--no-judge-cache", is_flag=True),
            flag(
                "evaluators-dir",
                "Extra evaluator skills for `rubric` judges (repeatable; highest precedence "
                "first).",
                "--evaluators-dir",
                "evaluators_dirs",
                multiple=True,
                metavar="DIR",
            ),
        ),
    ),
    Section(
        "Decision",
        "How attempts become a verdict.",
        (
            flag(
                "pass-k",
                "Attempts per task; a task passes if any of its first N passes.",
                "--pass-k",
                type=int,
                default=1,
                show_default=True,
                metavar="N",
            ),
            flag(
                "samples",
                "Attempts per task and arm (default: --pass-k; at most 1000).",
                "--samples",
                type=int,
                default=None,
                metavar="N",
            ),
            flag(
                "policy",
                "no-regression: pass iff the one-sided 96% lower bound of delta > -margin (10 "
                "points): a skill 10 points worse passes in <= 5% of runs. delta: pass iff delta "
                ">= --min-delta (the original rule). non-inferior: pass iff the 95% interval's "
                "low end > -margin (5 points). superior: pass iff the low end > 0.",
                "--policy",
                type=Choice(POLICIES),
                default=DEFAULT_POLICY,
                show_default=True,
            ),
            flag(
                "margin",
                "no-regression and non-inferior: how much worse the candidate may be (default "
                "0.10 and 0.05).",
                "--margin",
                type=float,
                default=None,
            ),
            flag(
                "min-delta",
                "delta policy: the smallest candidate - baseline that passes.",
                "--min-delta",
                type=float,
                default=0.0,
                show_default=True,
            ),
            flag(
                "early-stop",
                "With --samples N: stop sampling once the policy's sequential test (alpha "
                "spending over sample rounds) decides; false accepts stay at the fixed-sample "
                "level. See references/early-stop.md.",
                "--early-stop",
                is_flag=True,
            ),
            flag(
                "budget",
                "Spend ATTEMPTS attempts in all (both arms) instead of --samples per task: 2 per "
                "task and arm first, the rest where the other arm's first round says a task is "
                "flaky, which narrows the interval most; false accepts stay at the policy's "
                "level. Not with --samples, --early-stop, --shard, --batch, --pass-k > 1, "
                "--no-baseline or --baseline-cache-dir. See references/artifact.md (adaptive).",
                "--budget",
                type=int,
                default=None,
                metavar="ATTEMPTS",
            ),
            flag(
                "eval-threshold",
                "Pipeline: candidates scored below X are skipped.",
                "--eval-threshold",
                type=float,
                default=1.0,
                show_default=True,
                metavar="X",
            ),
            flag(
                "min-pass-rate",
                "With --no-baseline: the pass rate needed to pass.",
                "--min-pass-rate",
                type=float,
                default=0.5,
                show_default=True,
                metavar="X",
            ),
            flag(
                "max-error-rate",
                "Above this share of attempts in error the verdict is error.",
                "--max-error-rate",
                type=float,
                default=0.1,
                show_default=True,
            ),
        ),
    ),
    Section(
        "Records",
        "What is written and kept.",
        (
            flag(
                "state-root",
                "Directory for runs and artifacts; created if missing (default: .skill-eval in "
                "the current directory).",
                "--state-root",
                metavar="DIR",
                default=DEFAULT_STATE_ROOT,
            ),
            flag(
                "output",
                "Artifact path (default <state-root>/evaluations/<run_id>-<candidate_id>.json).",
                "--output",
                metavar="PATH",
            ),
            flag(
                "summary",
                "Append the summary table (per skill: tasks, pass rates, lift, verdict) as "
                "markdown to FILE, e.g. $GITHUB_STEP_SUMMARY.",
                "--summary",
                metavar="FILE",
            ),
            flag(
                "resume",
                "Continue a stopped run (its directory, or the latest run with the same inputs "
                "when given alone); only missing attempts run.",
                "--resume",
                is_flag=False,
                flag_value="",
                default=None,
                metavar="RUN_DIR",
            ),
            flag(
                "keep-workspaces",
                "Agent tasks: keep the final workspace of these attempts under "
                "<run>/workspaces/<arm>/<task>/<i>/ (20 MB cap each), for reading and for "
                "`rejudge`.",
                "--keep-workspaces",
                type=Choice(["none", "failed", "all"]),
                default="failed",
                show_default=True,
            ),
            flag(
                "baseline-cache-dir",
                "Pool baseline attempts across runs in this cache while the suite, fixtures, "
                "baseline skill, executor, model and settings are unchanged: each run adds its "
                "own, and compares against up to 4 x --samples a task; a full pool serves the "
                "baseline without a call [env SKILL_EVAL_BASELINE_CACHE_DIR].",
                "--baseline-cache-dir",
                metavar="DIR",
                envvar="SKILL_EVAL_BASELINE_CACHE_DIR",
            ),
            flag(
                "baseline-ttl",
                "How long each run's cached baseline attempts live (e.g. 7d, 12h, 3600).",
                "--baseline-ttl",
                default="7d",
                show_default=True,
                metavar="DURATION",
            ),
            flag(
                "journal-key",
                "The key file that signs the run's journal, so --resume and `merge` take only "
                "records skill-eval wrote (default <state-root>/journal.key, made on first use); "
                "shards merged on another machine share one [env SKILL_EVAL_JOURNAL_KEY_FILE].",
                "--journal-key",
                metavar="FILE",
                envvar="SKILL_EVAL_JOURNAL_KEY_FILE",
            ),
            flag(
                "max-preview-chars",
                "Outputs longer than this are kept whole in <run>/blobs/ and shown in the journal "
                "and artifact by their first and last N/2 characters.",
                "--max-preview-chars",
                type=int,
                default=DEFAULT_MAX_PREVIEW_CHARS,
                show_default=True,
                metavar="N",
            ),
            flag(
                "max-output-bytes",
                "An executor output longer than this is cut to it before judging (the cut is "
                "marked and recorded; not an error).",
                "--max-output-bytes",
                type=int,
                default=DEFAULT_MAX_OUTPUT_BYTES,
                show_default=True,
                metavar="N",
            ),
        ),
    ),
    Section(
        "Cost",
        "What the run will cost, said before it runs, and caps on it (references/cost.md).",
        (
            flag(
                "dry-run",
                "Print the run's plan (the executor and model, attempts per arm, judge calls, "
                "cached baseline attempts, tokens and dollars with their basis) and what a real "
                "run still needs here (a key, the agent CLI, a jail), and exit 0: no model call, "
                "no run directory, no key needed.",
                "--dry-run",
                is_flag=True,
            ),
            flag(
                "max-cost-usd",
                "Cap what the whole command spends (attempts and judge calls; improve's improver "
                "and review's role models too; earlier sessions of a resumed run too), each "
                "model reply counted as it comes: an estimate over it refuses a run before its "
                "first call; reaching it refuses every further model request (running attempts "
                "end as stopped, not failed), keeps the finished ones (resume with a higher cap) "
                "and exits 5.",
                "--max-cost-usd",
                type=float,
                default=None,
                metavar="DOLLARS",
            ),
            flag(
                "max-tokens-total",
                "Cap the whole command's tokens (input, cache and output, judges too), as "
                "--max-cost-usd caps dollars: for models with no known price. Exits 5 when it "
                "refuses or stops the command.",
                "--max-tokens-total",
                type=int,
                default=None,
                metavar="N",
            ),
        ),
    ),
    Section(
        "Console and config",
        "Progress display and the project config file.",
        (
            flag(
                "quiet", "No progress bar or lines.", "--quiet", "-q", "--no-progress", is_flag=True
            ),
            flag(
                "config",
                "Read defaults from this file: a pyproject.toml ([tool.skill-eval]) or a "
                "skill-eval.toml (default: the nearest one from here upwards).",
                "--config",
                metavar="FILE",
            ),
            flag("no-config", "Read no config file.", "--no-config", is_flag=True),
        ),
    ),
)
HIDDEN: tuple[Flag, ...] = (
    flag(
        "backend",
        "Deprecated name of --runner.",
        "--backend",
        "backend",
        type=Choice(["threads", "ray"]),
        default=None,
        hidden=True,
    ),
)


__all__ = ["HIDDEN", "HOW"]
