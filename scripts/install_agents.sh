#!/usr/bin/env bash
# Install the pinned agent CLIs that skill-eval tests against its fake OpenAI server, OpenCode
# (opencode-ai, Chat Completions) and Codex (@openai/codex, Responses), into a local npm prefix
# (never globally), and print the folder holding their `opencode` and `codex` commands.
#
#   scripts/install_agents.sh [PREFIX]      default PREFIX: <repo>/.tools/agents
#
# Idempotent: when the pinned versions are already there, nothing is downloaded. Stdout is
# the bin folder alone (callers read it); progress goes to stderr, one line per step (npm's
# own log is kept to errors), so a CI log is never silent for the install's minute or so.
# When npm is missing or the install fails it says why on stderr, prints nothing on stdout and
# exits 0, so callers (CI, tests) treat an empty answer as "no agent CLIs" and the tests that
# need them skip, naming this script. Both packages are native binaries in per-platform
# optional dependencies (about 780 MB on disk for linux-x64: OpenCode ships a baseline and an
# AVX2 build; Codex bundles its own bubblewrap and ripgrep). references/agents.md says what was
# verified against these pins; override them (OPENCODE_VERSION, CODEX_VERSION) at your own risk.
set -uo pipefail
started=$SECONDS

OPENCODE_VERSION="${OPENCODE_VERSION:-1.18.33}"
CODEX_VERSION="${CODEX_VERSION:-0.171.0}"

script="${BASH_SOURCE[0]}"
[[ "$script" == */* ]] || script="./$script"
repo_root="$(cd "${script%/*}/.." && pwd)"
prefix="${1:-$repo_root/.tools/agents}"
bin="$prefix/node_modules/.bin"

if ! command -v npm >/dev/null 2>&1; then
    echo "install_agents: npm not found; the agent CLI tests will skip" >&2
    exit 0
fi

installed_version() {
    # The version in an installed package's package.json, or nothing.
    local manifest="$prefix/node_modules/$1/package.json"
    [[ -f "$manifest" ]] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version)' "$manifest" 2>/dev/null || true
}

if [[ -x "$bin/opencode" && -x "$bin/codex" \
    && "$(installed_version opencode-ai)" == "$OPENCODE_VERSION" \
    && "$(installed_version @openai/codex)" == "$CODEX_VERSION" ]]; then
    echo "install_agents: opencode-ai@$OPENCODE_VERSION and @openai/codex@$CODEX_VERSION" \
        "already in $prefix" >&2
    echo "$bin"
    exit 0
fi

mkdir -p "$prefix"
# A private package.json keeps npm from walking up into the repository (or the user's home).
[[ -f "$prefix/package.json" ]] || echo '{"name": "skill-eval-agents", "private": true}' \
    >"$prefix/package.json"
echo "install_agents: npm install opencode-ai@$OPENCODE_VERSION" \
    "@openai/codex@$CODEX_VERSION into $prefix (about 780 MB on disk: a minute or more)" >&2
# opencode-ai's postinstall links the platform binary into its bin/; --foreground-scripts off
# and loglevel error keep the log to failures.
if ! npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
    "opencode-ai@$OPENCODE_VERSION" "@openai/codex@$CODEX_VERSION" >&2; then
    echo "install_agents: npm install failed; the agent CLI tests will skip" >&2
    exit 0
fi
for name in opencode codex; do
    if [[ ! -x "$bin/$name" ]]; then
        echo "install_agents: npm finished but $bin/$name is missing" >&2
        exit 0
    fi
done
echo "install_agents: done in $((SECONDS - started)) s: $bin" >&2
echo "$bin"
