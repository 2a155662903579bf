#!/usr/bin/env bash
# Make an agent image for the docker provider's tests where no registry is reachable, on a
# Debian bookworm root from Debian's own mirror (debootstrap, minbase, with python3 and
# pytest). Nothing of this machine's system is in it: it stands for the image Docker Desktop
# users build, whose CLIs the executors run instead of the host's.
#
#   scripts/make_test_agent_image.sh [IMAGE] [CLAUDE]
#       The Claude Code CLI claude-agent-sdk bundles (a native binary; or CLAUDE) at
#       /usr/local/bin/claude, labelled as the agent image is
#       (org.skill-eval.npm.@anthropic-ai/claude-code=<its version>). IMAGE: default
#       skill-eval-test-agent. About 4 minutes here.
#
#   scripts/make_test_agent_image.sh --dockerfile [IMAGE]
#       containers/agent-jail/Dockerfile built on a base of Debian's node and npm
#       (--build-arg BASE=skill-eval-node-base): the pinned CLIs from the npm registry, which
#       must be reachable. This machine's extra CA certificates (/usr/local/share/
#       ca-certificates: a TLS-intercepting proxy's) go into the base, for npm. IMAGE:
#       default skill-eval-agent. About 8 minutes here.
#
# ROOTFS=DIR reuses a root debootstrapped before by the same mode (copied, not changed).
# Needs root (debootstrap), debootstrap, docker and deb.debian.org (or DEBIAN_MIRROR). Exits
# 3 with one line on stderr when one is missing (tests skip, naming it).
set -euo pipefail

mode=bundled
if [[ "${1:-}" == "--dockerfile" ]]; then
    mode=dockerfile
    shift
fi
IMAGE="${1:-$([[ $mode == bundled ]] && echo skill-eval-test-agent || echo skill-eval-agent)}"
CLAUDE="${2:-}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
LABEL="org.skill-eval.npm.@anthropic-ai/claude-code"
script="${BASH_SOURCE[0]}"
[[ "$script" == */* ]] || script="./$script"
repo_root="$(cd "${script%/*}/.." && pwd)"

missing() { echo "make_test_agent_image: $1" >&2; exit 3; }
command -v docker >/dev/null 2>&1 || missing "no docker CLI"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || missing "docker cannot reach its engine"
command -v debootstrap >/dev/null 2>&1 || missing "no debootstrap (apt-get install debootstrap)"
[[ "$(id -u)" == 0 ]] || missing "debootstrap needs root"
if [[ $mode == bundled ]]; then
    if [[ -z "$CLAUDE" ]]; then
        CLAUDE="$(python3 -c 'import claude_agent_sdk, os; print(os.path.join(os.path.dirname(claude_agent_sdk.__file__), "_bundled", "claude"))' 2>/dev/null || true)"
    fi
    [[ -n "$CLAUDE" && -x "$CLAUDE" ]] || missing "no claude binary (pip install 'skill-eval[agent]', or pass its path)"
    version="$("$CLAUDE" --version | awk '{print $1}')"
    [[ -n "$version" ]] || missing "$CLAUDE --version said nothing"
fi

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
rm -rf "$root/var/cache/apt/archives"/*.deb

if [[ $mode == dockerfile ]]; then
    # node and npm from Debian, in the root (not debootstrap's --include: npm's many packages
    # fail its configuring stage)
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    chroot "$root" /bin/sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs npm' >"$work/apt.log" 2>&1 \
        || { tail -n 5 "$work/apt.log" >&2; missing "apt-get install nodejs npm failed (above)"; }
    : >"$root/etc/resolv.conf"
    rm -rf "$root/var/cache/apt/archives"/*.deb "$root/var/lib/apt/lists"/*
    echo "make_test_agent_image: node and npm in $((SECONDS - started)) s" >&2
    # npm trusts this machine's extra CAs only when told: NODE_EXTRA_CA_CERTS in the base
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
        chroot "$root" update-ca-certificates >/dev/null
    fi
    tar -C "$root" -c . | docker import \
        --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
        - skill-eval-node-base >/dev/null
    # (--network host: the build's apt-get and npm reach the mirror and the registry as
    # this machine does; the image's jails have no network at all)
    docker build --network host --build-arg BASE=skill-eval-node-base -t "$IMAGE" \
        "$repo_root/containers/agent-jail" >"$work/build.log" 2>&1 \
        || { tail -n 8 "$work/build.log" >&2; echo "make_test_agent_image: docker build failed" >&2; exit 1; }
    echo "make_test_agent_image: $IMAGE (the Dockerfile's) in $((SECONDS - started)) s" >&2
    exit 0
fi

install -m 0755 "$CLAUDE" "$root/usr/local/bin/claude"
# What the Dockerfile's image has too: uid 1000 (the jail's user) named, its HOME and
# workspace, and the mountpoints of the jail's helpers.
echo "agent:x:1000:1000::/home/agent:/bin/bash" >>"$root/etc/passwd"
echo "agent:x:1000:" >>"$root/etc/group"
mkdir -p "$root/workspace" "$root/home/agent" "$root/run/skill-eval" "$root/run/skill-eval-link"
chown 1000:1000 "$root/workspace" "$root/home/agent"
rm -rf "$root/var/lib/apt/lists"/*

tar -C "$root" -c . | docker import \
    --change "LABEL \"$LABEL\"=\"$version\"" \
    --change 'USER 1000:1000' \
    --change 'WORKDIR /workspace' \
    --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
    - "$IMAGE" >/dev/null
echo "make_test_agent_image: $IMAGE (claude $version) in $((SECONDS - started)) s" >&2
