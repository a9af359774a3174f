#!/usr/bin/env bash
# Installs Debian packages when their command is missing: install-packages.sh CMD=PACKAGE ...
# A CMD with a / is a file the package installs (a jar has no command): it is checked to exist.
# Safe to run from make's parallel jobs (`make test` runs some at once): the check takes the
# lock shared and an install takes it whole, so a check never sees a command that an install
# under way has unpacked but not yet configured, and what the install before it put in place
# is looked for again once the lock is held whole. apt runs without the lock's descriptor, so
# a daemon a package's script starts (nginx's postinst starts nginx) cannot keep the lock
# after this script ends; a lock held for 15 minutes is reported, not waited for.
set -euo pipefail
missing() {
  local pair check
  for pair in "$@"; do
    check="${pair%%=*}"
    if [[ "$check" == */* ]]; then [ -e "$check" ] && continue; else command -v "$check" >/dev/null 2>&1 && continue; fi
    echo "${pair#*=}"
  done
}
ASKED="$*"
LOCK="${TMPDIR:-/tmp}/waymark-install-packages.lock"
exec 9>>"$LOCK"
lock() {
  flock "$1" -w 900 9 && return 0
  echo "install-packages.sh: another install has held $LOCK for 15 minutes (fuser -v $LOCK); not installing: $ASKED" >&2
  exit 1
}
lock -s
[ -z "$(missing "$@")" ] && exit 0
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
lock -x
mapfile -t packages < <(missing "$@")
[ ${#packages[@]} -eq 0 ] && exit 0
echo "installing: ${packages[*]}" >&2
$SUDO apt-get update -qq >/dev/null 9>&-
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null 9>&-
