"""The help text of each flag of `skill-eval run` (cli/run_flags.py defines the flags): what
`run --help` shows, and what the commands sharing a flag show unless they say otherwise. A
help naming executors is a function, read from the registry when the help is shown (never
when the CLI is imported; cli/run_flags.py's RegistryHelp), so no list here can go stale."""

from __future__ import annotations

from collections.abc import Callable

Help = str | Callable[[], str]


def _shorthand(setting: str, what: str, graders: bool = False) -> Callable[[], str]:
    """The help of a flag that sets one executor option (`setting`, `max_tokens=N`): the
    executors whose config has that option, and their graders with `graders`."""

    def text() -> str:
        from ..executors.catalog import executors_with_option

        names = ", ".join(executors_with_option(setting.partition("=")[0]))
        also = ", and their graders" if graders else ""
        return f"{what} Shorthand for --executor-option {setting} ({names}{also})."

    return text


def _executor() -> str:
    from ..executors.base import DEFAULT_EXECUTOR, OFFLINE_EXECUTOR

    return (
        f"How tasks run (default: {DEFAULT_EXECUTOR}; {OFFLINE_EXECUTOR}, no model calls, with "
        "--mock). Each shorthand below names the executors that have its option."
    )


HELP: dict[str, Help] = {
    "task-suite": (
        "Task suite YAML, or an eval set it is made from: an evals.json (skill-creator's, the "
        "agentskills.io guide's, Driftproof's) or a trigger set (references/interop.md). "
        "Required unless SKILL_DIR or --resume RUN_DIR is given."
    ),
    "changed-since": (
        "With SKILL_DIR: only the skills whose folder changed since this git ref (committed "
        "since its merge base with HEAD, uncommitted or untracked)."
    ),
    "summary": (
        "Append the summary table (per skill: tasks, pass rates, lift, verdict) as markdown "
        "to FILE, e.g. $GITHUB_STEP_SUMMARY."
    ),
    "standalone": (
        "Evaluate a skill directly, no ranking artifact (implied by --skill-path without --input)."
    ),
    "skill-path": "Standalone: the candidate skill, a SKILL.md or its directory.",
    "baseline-skill": "Standalone: compare against this skill instead of no skill.",
    "no-baseline": "Standalone: run the candidate alone; pass iff pass rate >= --min-pass-rate.",
    "arm": (
        "Standalone, repeatable: an arm that runs the candidate skill on EXECUTOR (default: "
        "--executor) delivered as installed (its skills folder), context (CLAUDE.md / "
        "AGENTS.md), nudged (installed, and the prompt says to use it), system, prepend, or "
        "none (no skill), on MODEL after @ (default: the executor's). Two or more replace the "
        "candidate/baseline pair; each is compared with the reference arm (references/arms.md)."
    ),
    "reference-arm": "With --arm: the arm the others are compared with (default: the none arm, "
    "else the first; required with none arms on several models).",
    "input": "Pipeline mode: ranking artifact from the discriminator.",
    "candidate-id": "Pipeline mode: the candidate in scored_candidates[] to evaluate.",
    "skills-root": (
        "Pipeline: an extra fence: a ranking's target.path must lie inside DIR (by default a skill"
        " anywhere is accepted)."
    ),
    "strict": (
        "What the inputs leave out is an error, not a warning: --mock-outputs that do not "
        "script every arm and task of the run."
    ),
    "executor": _executor,
    "mock": "No model calls: mock executor and mock judges (offline, for CI).",
    "model": "Model for the executor [env SKILL_EVAL_MODEL].",
    "skill-mode": (
        "How the skill reaches the model: prepended to the task, as the system prompt, "
        "installed as the agent's skill (into its skills folder), or written into the agent's "
        "always-on context file (CLAUDE.md, AGENTS.md): only agent executors install or write. "
        "With --arm each arm's delivery decides."
    ),
    "executor-option": (
        "One of the executor's own options (repeatable); VALUE is read as YAML (3, true, [Read, "
        "Grep]) or kept as text. An unknown key lists the executor's options."
    ),
    "max-tokens": _shorthand("max_tokens=N", "Max output tokens (executor default 4096)."),
    "temperature": _shorthand("temperature=X", "Sampling temperature."),
    "price-file": _shorthand(
        "price_file=FILE", "JSON/YAML price table overriding the built-in one."
    ),
    "base-url": _shorthand(
        "base_url=URL",
        "The API's base URL (for the OpenAI-style ones up to /v1, e.g. a local "
        "http://localhost:11434/v1); no key is needed for localhost.",
    ),
    "batch": _shorthand(
        "batch=true",
        "Send the attempts through the Message Batches API (half price; results in minutes to "
        "hours); --resume polls the same batch.",
    ),
    "fixed-concurrency": _shorthand(
        "adaptive_concurrency=false",
        "Keep --concurrency calls at once instead of adapting (halve on 429/529, grow by one per "
        "window of successes).",
    ),
    "claude-bin": _shorthand("claude_bin=PATH", "The claude binary.", graders=True),
    "max-turns": _shorthand("max_turns=N", "The agent's turn limit (Claude Code's --max-turns)."),
    "trigger-model": _shorthand(
        "trigger_model=NAME",
        "Model of trigger tasks' attempts (default: claude-haiku-5-5, a cheap check; "
        "[env SKILL_EVAL_TRIGGER_MODEL]).",
    ),
    "allowed-tools": _shorthand(
        "allowed_tools=[A,B]",
        "Tools to offer (default: none; installed mode: Skill,Read,Glob,Grep); file tools work "
        "inside the workspace only.",
    ),
    "unsandboxed-bash": _shorthand(
        "unsandboxed_bash=true",
        "Offer Bash even where Claude Code's sandbox cannot run (Bash is then NOT confined to the "
        "workspace).",
    ),
    "mock-outputs": _shorthand(
        "mock_outputs=FILE",
        "Script the mock executor: {task_id: text} or {candidate: {...}, baseline: {...}} (YAML or"
        " JSON); for agent tasks an output may be {text, files: {path: content}, tools: [{name, "
        "input}]}.",
    ),
    "mock-rules": _shorthand(
        "mock_rules=true",
        "Test double: unscripted answers name a task's `contains` terms only when the skill holds "
        "its [rule:<task or category>] marker (see references/improve.md).",
    ),
    "runner": (
        "Where attempts run: a thread pool here, or Ray tasks on a cluster (needs skill-eval[ray];"
        " --concurrency still caps attempts at once)."
    ),
    "backend": "Deprecated name of --runner.",
    "ray-address": (
        "--runner ray: the cluster to use (e.g. auto, ray://host:10001; default: start a local Ray"
        " for the run)."
    ),
    "concurrency": "Attempts running at once, both arms sharing one pool.",
    "max-retries": (
        "Retries for rate limits, overload, 5xx, timeouts and transient judge errors (not for "
        "errors a retry cannot heal). An agent CLI resends a failed API request itself, up to N "
        "times, before the attempt is retried."
    ),
    "jail": (
        "The jail provider that confines what the candidate controls: auto (the default: "
        "the first that can run here, bubblewrap before container), bubblewrap, container "
        "(Podman; container:IMAGE runs IMAGE), or a plugin's (entry points "
        "skill_eval.jail_providers). Where none can run, one line says what to install."
    ),
    "no-jail": (
        "Run what the candidate controls (the agent and its tools, code a pytest judge runs on "
        "an output) without skill-eval's jail: only where none can be built (no bubblewrap, no "
        "user namespaces, not Linux). The summary says so first, and the artifact records it."
    ),
    "journal-key": (
        "The key file that signs the run's journal, so --resume and `merge` take only records "
        "skill-eval wrote (default <state-root>/journal.key, made on first use); shards merged "
        "on another machine share one [env SKILL_EVAL_JOURNAL_KEY_FILE]."
    ),
    "shard": (
        "Run only slice I of N of the (task, sample) pairs (both arms of a pair together), in its "
        "own run directory; join the slices with `skill-eval merge` (see references/ci.md)."
    ),
    "judge-executor": (
        "The executor whose model grades the model-graded judges (default: follows --executor)."
    ),
    "judge-model": (
        "Model for LLM judges (default: claude-haiku-5-5, a cheap check; "
        "[env SKILL_EVAL_JUDGE_MODEL])."
    ),
    "judge-cache-dir": "Judge cache (default <state-root>/judge-cache).",
    "no-judge-cache": "Judge every output afresh.",
    "evaluators-dir": (
        "Extra evaluator skills for `rubric` judges (repeatable; highest precedence first)."
    ),
    "pass-k": "Attempts per task; a task passes if any of its first N passes.",
    "samples": "Attempts per task and arm (default: --pass-k; at most 1000).",
    "policy": (
        "no-regression: pass iff the one-sided 96% lower bound of delta > -margin (10 points): a "
        "skill 10 points worse passes in <= 5% of runs. delta: pass iff delta >= --min-delta (the "
        "original rule). non-inferior: pass iff the 95% interval's low end > -margin (5 points). "
        "superior: pass iff the low end > 0."
    ),
    "margin": (
        "no-regression and non-inferior: how much worse the candidate may be (default 0.10 and "
        "0.05)."
    ),
    "min-delta": "delta policy: the smallest candidate - baseline that passes.",
    "early-stop": (
        "With --samples N: stop sampling once the policy's sequential test (alpha spending over "
        "sample rounds) decides; false accepts stay at the fixed-sample level. See "
        "references/early-stop.md."
    ),
    "budget": (
        "Spend ATTEMPTS attempts in all (both arms) instead of --samples per task: 2 per task "
        "and arm first, the rest where the other arm's first round says a task is flaky, which "
        "narrows the interval most; false accepts stay at the policy's level. Not with "
        "--samples, --early-stop, --shard, --batch, --pass-k > 1, --no-baseline or "
        "--baseline-cache-dir. See references/artifact.md (adaptive)."
    ),
    "eval-threshold": "Pipeline: candidates scored below X are skipped.",
    "min-pass-rate": "With --no-baseline: the pass rate needed to pass.",
    "max-error-rate": "Above this share of attempts in error the verdict is error.",
    "state-root": (
        "Directory for runs and artifacts; created if missing (default: .skill-eval in the current"
        " directory)."
    ),
    "output": "Artifact path (default <state-root>/evaluations/<run_id>-<candidate_id>.json).",
    "resume": (
        "Continue a stopped run (its directory, or the latest run with the same inputs when given "
        "alone); only missing attempts run."
    ),
    "keep-workspaces": (
        "Agent tasks: keep the final workspace of these attempts under "
        "<run>/workspaces/<arm>/<task>/<i>/ (20 MB cap each), for reading and for `rejudge`."
    ),
    "baseline-cache-dir": (
        "Pool baseline attempts across runs in this cache while the suite, fixtures, baseline "
        "skill, executor, model and settings are unchanged: each run adds its own, and compares "
        "against up to 4 x --samples a task; a full pool serves the baseline without a call "
        "[env SKILL_EVAL_BASELINE_CACHE_DIR]."
    ),
    "baseline-ttl": "How long each run's cached baseline attempts live (e.g. 7d, 12h, 3600).",
    "max-preview-chars": (
        "Outputs longer than this are kept whole in <run>/blobs/ and shown in the journal and "
        "artifact by their first and last N/2 characters."
    ),
    "max-output-bytes": (
        "An executor output longer than this is cut to it before judging (the cut is marked and "
        "recorded; not an error)."
    ),
    "dry-run": (
        "Print the run's plan (attempts per arm, judge calls, cached baseline attempts, tokens "
        "and dollars with their basis) and exit 0: no model call, no run directory."
    ),
    "max-cost-usd": (
        "Cap the run's cost (attempts and judge calls, earlier sessions of a resumed run too): "
        "an estimate over it refuses the run before its first call; reaching it starts no new "
        "attempt, keeps the finished ones (resume with a higher cap) and exits 5."
    ),
    "max-tokens-total": (
        "Cap the run's tokens (input, cache and output, judges too), as --max-cost-usd caps "
        "dollars: for models with no known price. Exits 5 when it refuses or stops the run."
    ),
    "quiet": "No progress bar or lines.",
    "config": (
        "Read defaults from this file: a pyproject.toml ([tool.skill-eval]) or a skill-eval.toml "
        "(default: the nearest one from here upwards)."
    ),
    "no-config": "Read no config file.",
}
