#!/usr/bin/env bash
# The OS packages the tests use, from Debian's apt when they are missing and root or sudo can
# install them: bubblewrap (the jail every pytest judgement runs in, and Claude Code's own
# sandbox), socat (Claude Code's sandbox), chromium (the HTML report's browser tests), and
# podman and runc (a container engine, for the container tests).
# Without root the tests that need them skip with the reason, or fail closed with one line.
# One line per step on stderr (apt's own output is hidden): a CI log is never silent for the
# minutes chromium can take.
set -uo pipefail
started=$SECONDS
say() { echo "install_os_packages: $*" >&2; }
[ "$(uname -s)" = Linux ] || { say "not Linux: no OS packages installed"; exit 0; }
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v socat >/dev/null 2>&1 || missing+=(socat)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
  || missing+=(chromium)
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v runc >/dev/null 2>&1 || missing+=(runc)
if [ ${#missing[@]} -eq 0 ]; then
  say "bubblewrap, socat, chromium, podman and runc are installed: nothing to do"
  exit 0
fi
as_root=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root="sudo -n"
  else
    say "missing ${missing[*]} and no root: the tests that need them will skip"; exit 0
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  say "missing ${missing[*]} and no apt-get: install them with your package manager"
  exit 0
fi
say "missing ${missing[*]}: apt-get update"
$as_root apt-get update -qq >/dev/null 2>&1 \
  || say "apt-get update failed: installing from the lists already there"
for package in "${missing[@]}"; do
  say "apt-get install $package ..."
  step=$SECONDS
  if $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" \
      >/dev/null 2>&1; then
    say "installed $package in $((SECONDS - step)) s"
  else
    say "could not install $package: the tests that need it will skip"
  fi
done
say "done in $((SECONDS - started)) s"
exit 0
