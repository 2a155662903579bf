#!/usr/bin/env bash
# The pull-request gate of action.yml, in one of three modes (SKILL_EVAL_MODE):
#
#   offline   (default; no key) "the changed skills' evals are sound": `skill-eval gate`. The
#             evals each changed skill is judged by load, their deterministic checks pass the
#             task's reference and fail an empty output, the skill lints. No model is called
#             and no verdict about a skill is given. Exit 0 sound, 1 not sound (or evals
#             removed, or a changed skill with no evals), 3 could not check, 2 bad input.
#   measured  (a key) the real verdicts: `skill-eval run SKILLS --changed-since BASE` with
#             --max-cost-usd, its table and each evaluation's report in the job summary and
#             an HTML page per evaluation. Exit as the run did (0 pass, 1 fail, 4 not enough
#             evidence, 3 error, 5 over budget, 2 bad input).
#   comment   post the summary an earlier mode wrote as a pull-request comment (`gh`, with
#             GH_TOKEN: only this mode needs a token, and it runs nothing of the pull request).
#
# Settings, from the environment (action.yml maps its inputs to these):
#   SKILL_EVAL_SKILLS      skill folders, or folders searched for them at any depth (default .)
#   SKILL_EVAL_BASE        git ref to compare with (default: origin/$GITHUB_BASE_REF on a pull
#                          request, else every skill is checked)
#   SKILL_EVAL_EVALS_FROM  head (default) or base: judge each changed skill by the base's evals
#   SKILL_EVAL_ALLOW_UNJUDGED  "true": a changed skill with no evals does not fail the gate
#   SKILL_EVAL_ARGS        measured: more flags for `skill-eval run` (e.g. --executor anthropic)
#   SKILL_EVAL_MAX_COST_USD  measured: the run's spending cap (default 5)
#   SKILL_EVAL_REPORT_DIR  where the reports go (default: skill-eval-report)
#   GITHUB_STEP_SUMMARY    the job summary file (set by GitHub Actions)
#
# What the pull request names (folders, task ids, its text) reaches the summary only through
# skill-eval's renderers, which show it as text; this script writes no name of its own.
set -uo pipefail

mode=${SKILL_EVAL_MODE:-offline}
skills=${SKILL_EVAL_SKILLS:-.}
report_dir=${SKILL_EVAL_REPORT_DIR:-skill-eval-report}
summary="$report_dir/summary.md"
base=${SKILL_EVAL_BASE:-}
if [[ -z "$base" && -n "${GITHUB_BASE_REF:-}" ]]; then
    base="origin/${GITHUB_BASE_REF}"
fi

comment() {
    # A comment only when asked, and never a failure of the gate: a read-only token says so.
    local number=""
    if [[ -n "${GITHUB_EVENT_PATH:-}" && -f "$GITHUB_EVENT_PATH" ]]; then
        # -I: no module of the working folder (the pull request's) is importable here
        number=$(python3 -I -c 'import json,sys; n=json.load(open(sys.argv[1])).get("number"); print(n if isinstance(n, int) else "")' \
            "$GITHUB_EVENT_PATH" 2>/dev/null)
    fi
    if [[ ! -s "$summary" ]]; then
        echo "skill-eval gate: no summary to comment ($summary)" >&2
    elif [[ -z "$number" ]]; then
        echo "skill-eval gate: not a pull request event; no comment" >&2
    elif ! gh pr comment "$number" --body-file "$summary" ${GITHUB_REPOSITORY:+--repo "$GITHUB_REPOSITORY"} >&2; then
        echo "skill-eval gate: could not comment (does the workflow grant pull-requests: write?)" >&2
    fi
    return 0
}

if [[ "$mode" == "comment" ]]; then
    comment
    exit 0
fi
if [[ "$mode" != "offline" && "$mode" != "measured" ]]; then
    echo "skill-eval gate: SKILL_EVAL_MODE must be offline, measured or comment, not '$mode'" >&2
    exit 2
fi

mkdir -p "$report_dir" || exit 3
: >"$summary"
read -r -a skill_args <<<"$skills"
args=()
if [[ -n "$base" ]]; then
    args+=(--changed-since "$base" --evals-from "${SKILL_EVAL_EVALS_FROM:-head}")
    if [[ "${SKILL_EVAL_ALLOW_UNJUDGED:-false}" == "true" ]]; then
        args+=(--allow-unjudged)
    fi
elif [[ "${SKILL_EVAL_EVALS_FROM:-head}" == "base" ]]; then
    echo "skill-eval gate: evals-from base needs a base ref (a pull request, or base:); every skill is checked with its own evals" >&2
fi

if [[ "$mode" == "offline" ]]; then
    skill-eval gate "${skill_args[@]}" "${args[@]}" --summary "$summary"
    code=$?
else
    read -r -a extra_args <<<"${SKILL_EVAL_ARGS:-}"
    skill-eval run "${skill_args[@]}" "${args[@]}" --state-root "$report_dir/state" \
        --max-cost-usd "${SKILL_EVAL_MAX_COST_USD:-5}" --summary "$summary" \
        "${extra_args[@]}" >"$report_dir/artifacts.txt"
    code=$?
    # Each evaluation's markdown report under the table, and its HTML page beside it.
    n=0
    while IFS= read -r artifact; do
        [[ -n "$artifact" ]] || continue
        n=$((n + 1))
        {
            echo
            echo "<details><summary>evaluation $n</summary>"
            echo
            skill-eval report --format markdown "$artifact"
            echo
            echo "</details>"
        } >>"$summary"
        skill-eval report --format html -o "$report_dir/evaluation-$n.html" "$artifact" || code=3
    done <"$report_dir/artifacts.txt"
fi

if [[ ! -s "$summary" ]]; then  # bad input: nothing wrote a report
    printf '## skill-eval\n\nThe gate stopped before any check (exit %s); see the job log.\n' \
        "$code" >"$summary"
fi
if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
    cat "$summary" >>"$GITHUB_STEP_SUMMARY"
fi
echo "skill-eval gate ($mode): exit $code; reports in $report_dir" >&2
exit "$code"
