#!/usr/bin/env bash
# Install a pinned Claude Code CLI (@anthropic-ai/claude-code) into a local npm prefix and print
# the path of its `claude` binary on stdout.
#
#   scripts/install_claude_cli.sh [PREFIX]      default PREFIX: <repo>/.tools/claude-cli
#
# Idempotent: when the pinned version is already installed there, nothing is downloaded.
# When npm is missing it explains why on stderr, prints nothing on stdout and exits 0, so callers
# (CI, tests) can treat an empty answer as "no CLI available" and skip.
# Override the pin with CLAUDE_CLI_VERSION=x.y.z if you must; the tests are written against the pin.
set -euo pipefail

CLAUDE_CLI_VERSION="${CLAUDE_CLI_VERSION:-2.1.330}"
PACKAGE="@anthropic-ai/claude-code"

script="${BASH_SOURCE[0]}"
[[ "$script" == */* ]] || script="./$script"
repo_root="$(cd "${script%/*}/.." && pwd)"
prefix="${1:-$repo_root/.tools/claude-cli}"
bin="$prefix/node_modules/.bin/claude"

if ! command -v npm >/dev/null 2>&1; then
    echo "install_claude_cli: npm not found; skipping the Claude Code CLI install" >&2
    exit 0
fi

installed_version() {
    # The version recorded in the installed package.json, or nothing.
    local manifest="$prefix/node_modules/@anthropic-ai/claude-code/package.json"
    [[ -f "$manifest" ]] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version)' "$manifest" 2>/dev/null || true
}

if [[ -x "$bin" && "$(installed_version)" == "$CLAUDE_CLI_VERSION" ]]; then
    echo "install_claude_cli: $PACKAGE@$CLAUDE_CLI_VERSION already in $prefix" >&2
    echo "$bin"
    exit 0
fi

mkdir -p "$prefix"
# A private package.json keeps npm from walking up into the repository (or the user's home).
[[ -f "$prefix/package.json" ]] || echo '{"name": "skill-eval-claude-cli", "private": true}' \
    >"$prefix/package.json"

echo "install_claude_cli: installing $PACKAGE@$CLAUDE_CLI_VERSION into $prefix" >&2
# --engine-strict=false: the package asks for node >= 22 but only its postinstall script runs
# under node; the CLI itself is a native binary shipped in a platform optional dependency.
npm install --prefix "$prefix" --no-audit --no-fund --no-save --engine-strict=false \
    --loglevel=error "$PACKAGE@$CLAUDE_CLI_VERSION" >&2

if [[ ! -x "$bin" ]]; then
    echo "install_claude_cli: npm finished but $bin is missing" >&2
    exit 1
fi
echo "$bin"
