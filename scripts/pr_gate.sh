#!/usr/bin/env bash
# The pull-request gate of action.yml: run the skills a pull request changed, with their own
# evals (`skill-eval run SKILL_DIR --changed-since BASE`), write the markdown report to the
# job summary, an HTML report per evaluation to the report folder, and exit as the run did
# (0 pass, 1 fail, 4 not enough evidence, 3 error, 2 bad input).
#
# Settings, from the environment (action.yml maps its inputs to these):
#   SKILL_EVAL_SKILLS      skill folders, or folders of them, space-separated (default: .)
#   SKILL_EVAL_BASE        git ref to compare with (default: origin/$GITHUB_BASE_REF on a
#                          pull request, else every skill runs)
#   SKILL_EVAL_ARGS        more flags for `skill-eval run` (e.g. --mock, --executor anthropic)
#   SKILL_EVAL_REPORT_DIR  where the reports go (default: skill-eval-report)
#   SKILL_EVAL_COMMENT     "true": also comment on the pull request (needs `gh`, GH_TOKEN and a
#                          workflow granting pull-requests: write); off by default
#   GITHUB_STEP_SUMMARY    the job summary file (set by GitHub Actions)
set -uo pipefail

skills=${SKILL_EVAL_SKILLS:-.}
report_dir=${SKILL_EVAL_REPORT_DIR:-skill-eval-report}
base=${SKILL_EVAL_BASE:-}
if [[ -z "$base" && -n "${GITHUB_BASE_REF:-}" ]]; then
    base="origin/${GITHUB_BASE_REF}"
fi
mkdir -p "$report_dir" || exit 3
summary="$report_dir/summary.md"
: >"$summary"

args=()
read -r -a skill_args <<<"$skills"
read -r -a extra_args <<<"${SKILL_EVAL_ARGS:-}"
if [[ -n "$base" ]]; then
    args+=(--changed-since "$base")
fi

skill-eval run "${skill_args[@]}" "${args[@]}" --state-root "$report_dir/state" \
    --summary "$summary" "${extra_args[@]}" >"$report_dir/artifacts.txt"
code=$?

# Each evaluation's markdown report under the table, and its HTML page beside it.
while IFS= read -r artifact; do
    [[ -n "$artifact" ]] || continue
    name=$(basename "$artifact" .json)
    {
        echo
        echo "<details><summary>$name</summary>"
        echo
        skill-eval report --format markdown "$artifact"
        echo
        echo "</details>"
    } >>"$summary"
    skill-eval report --format html -o "$report_dir/$name.html" "$artifact" || code=3
done <"$report_dir/artifacts.txt"

if [[ ! -s "$summary" ]]; then  # bad input: the run wrote no table
    printf '## skill-eval\n\nThe run stopped before any evaluation (exit %s); see the job log.\n' \
        "$code" >"$summary"
fi
if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
    cat "$summary" >>"$GITHUB_STEP_SUMMARY"
fi

# A comment only when asked, and never a failure of the gate: a read-only token says so.
if [[ "${SKILL_EVAL_COMMENT:-false}" == "true" ]]; then
    number=""
    if [[ -n "${GITHUB_EVENT_PATH:-}" && -f "$GITHUB_EVENT_PATH" ]]; then
        number=$(python -c 'import json,sys; print(json.load(open(sys.argv[1])).get("number") or "")' \
            "$GITHUB_EVENT_PATH" 2>/dev/null)
    fi
    if [[ -z "$number" ]]; then
        echo "skill-eval gate: not a pull request event; no comment" >&2
    elif ! gh pr comment "$number" --body-file "$summary" >&2; then
        echo "skill-eval gate: could not comment (does the workflow grant pull-requests: write?)" >&2
    fi
fi

echo "skill-eval gate: exit $code; reports in $report_dir" >&2
exit "$code"
