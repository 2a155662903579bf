#!/usr/bin/env bash
# Make a small agent image for the docker provider's tests where no registry is reachable: a
# Debian bookworm root from Debian's own mirror (debootstrap, minbase, with python3 and
# pytest), the Claude Code CLI claude-agent-sdk bundles (a native binary) at
# /usr/local/bin/claude, imported into Docker with the label the agent image carries
# (org.skill-eval.npm.@anthropic-ai/claude-code=<its version>). Nothing of this machine's
# system is in it: it stands for containers/agent-jail/Dockerfile's image on Docker Desktop,
# whose CLIs the executors run instead of the host's.
#
#   scripts/make_test_agent_image.sh [IMAGE] [CLAUDE]
#       IMAGE   default skill-eval-test-agent
#       CLAUDE  the claude binary to put in (default: claude-agent-sdk's bundled one, found
#               by the python3 on PATH)
#
# ROOTFS=DIR reuses a root debootstrapped before with the same command (copied, not changed).
# Needs root (debootstrap), debootstrap, docker and deb.debian.org (or DEBIAN_MIRROR). Exits
# 3 with one line on stderr when one is missing (tests skip, naming it). Takes a few minutes:
# see references/ci.md ("What was tested (#54)") for the time it took.
set -euo pipefail

IMAGE="${1:-skill-eval-test-agent}"
CLAUDE="${2:-}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
LABEL="org.skill-eval.npm.@anthropic-ai/claude-code"

missing() { echo "make_test_agent_image: $1" >&2; exit 3; }
command -v docker >/dev/null 2>&1 || missing "no docker CLI"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || missing "docker cannot reach its engine"
command -v debootstrap >/dev/null 2>&1 || missing "no debootstrap (apt-get install debootstrap)"
[[ "$(id -u)" == 0 ]] || missing "debootstrap needs root"
if [[ -z "$CLAUDE" ]]; then
    CLAUDE="$(python3 -c 'import claude_agent_sdk, os; print(os.path.join(os.path.dirname(claude_agent_sdk.__file__), "_bundled", "claude"))' 2>/dev/null || true)"
fi
[[ -n "$CLAUDE" && -x "$CLAUDE" ]] || missing "no claude binary (pip install 'skill-eval[agent]', or pass its path)"
version="$("$CLAUDE" --version | awk '{print $1}')"
[[ -n "$version" ]] || missing "$CLAUDE --version said nothing"

work="$(mktemp -d "${TMPDIR:-/tmp}/skill-eval-agent-image.XXXXXX")"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
started=$SECONDS
if [[ -n "${ROOTFS:-}" ]]; then  # a root debootstrapped before (the same command): reused
    [[ -x "$ROOTFS/usr/bin/python3" ]] || missing "ROOTFS=$ROOTFS holds no python3"
    cp -a "$ROOTFS" "$root"
else
    debootstrap --variant=minbase --include=python3,python3-pytest,ca-certificates \
        bookworm "$root" "$MIRROR" >"$work/debootstrap.log" 2>&1 \
        || { tail -n 5 "$work/debootstrap.log" >&2; missing "debootstrap failed (above)"; }
    echo "make_test_agent_image: debootstrap took $((SECONDS - started)) s" >&2
fi

install -m 0755 "$CLAUDE" "$root/usr/local/bin/claude"
# What the Dockerfile's image has too: uid 1000 (the jail's user) named, its HOME and
# workspace, and the mountpoints of the jail's helpers.
echo "agent:x:1000:1000::/home/agent:/bin/bash" >>"$root/etc/passwd"
echo "agent:x:1000:" >>"$root/etc/group"
mkdir -p "$root/workspace" "$root/home/agent" "$root/run/skill-eval" "$root/run/skill-eval-link"
chown 1000:1000 "$root/workspace" "$root/home/agent"
rm -rf "$root/var/cache/apt/archives"/*.deb "$root/var/lib/apt/lists"/*

tar -C "$root" -c . | docker import \
    --change "LABEL \"$LABEL\"=\"$version\"" \
    --change 'USER 1000:1000' \
    --change 'WORKDIR /workspace' \
    --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
    - "$IMAGE" >/dev/null
echo "make_test_agent_image: $IMAGE (claude $version) in $((SECONDS - started)) s" >&2
