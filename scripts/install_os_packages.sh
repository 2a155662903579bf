#!/usr/bin/env bash
# The OS packages the tests use, from Debian's apt when they are missing and root or sudo can
# install them: bubblewrap (the jail every pytest judgement runs in, and Claude Code's own
# sandbox), socat (Claude Code's sandbox) and chromium (the HTML report's browser tests).
# Without root the tests that need them skip with the reason, or fail closed with one line.
set -uo pipefail
[ "$(uname -s)" = Linux ] || { echo "not Linux: no OS packages installed" >&2; exit 0; }
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v socat >/dev/null 2>&1 || missing+=(socat)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
  || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0
as_root=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root="sudo -n"
  else
    echo "missing ${missing[*]} and no root: the tests that need them will skip" >&2; exit 0
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "missing ${missing[*]} and no apt-get: install them with your package manager" >&2
  exit 0
fi
$as_root apt-get update -qq >/dev/null 2>&1 || true
for package in "${missing[@]}"; do
  $as_root apt-get install -y -qq "$package" >/dev/null 2>&1 \
    || echo "could not install $package: the tests that need it will skip" >&2
done
exit 0
