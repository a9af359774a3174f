#!/usr/bin/env bash
# Installs Debian packages when their command is missing: install-packages.sh CMD=PACKAGE ...
# A CMD with a / is a file the package installs (a jar has no command): it is checked to exist.
# Safe to run from make's parallel jobs (`make test` runs some at once): one install at a time,
# under a lock; what the one before it installed is looked for again once the lock is held.
set -euo pipefail
missing() {
  local pair check
  for pair in "$@"; do
    check="${pair%%=*}"
    if [[ "$check" == */* ]]; then [ -e "$check" ] && continue; else command -v "$check" >/dev/null 2>&1 && continue; fi
    echo "${pair#*=}"
  done
}
[ -z "$(missing "$@")" ] && exit 0
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
exec 9>"${TMPDIR:-/tmp}/waymark-install-packages.lock"
flock 9
mapfile -t packages < <(missing "$@")
[ ${#packages[@]} -eq 0 ] && exit 0
echo "installing: ${packages[*]}" >&2
$SUDO apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
