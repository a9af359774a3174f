#!/usr/bin/env bash
# Installs Debian packages when their command is missing: install-packages.sh CMD=PACKAGE ...
# A CMD with a / is a file the package installs (a jar has no command): it is checked to exist.
# Safe to run from make's parallel jobs (`make test` runs some at once):
# - With every command there and none of their packages half-installed by a run under way
#   (dpkg says unpacked or half-configured), it exits at once, taking no lock: a check never
#   waits behind another job's long install of something else.
# - Otherwise it takes the install lock, waiting at most 15 minutes (then says who may hold
#   it), looks again, and installs what is still missing: one install at a time.
# - apt runs without the lock's descriptor, so a daemon a package's script starts (nginx's
#   postinst starts nginx) cannot keep the lock after this script ends. The lock is opened
#   read-only (flock needs no more), so any user may take it.
set -euo pipefail
missing() {
  local pair check
  for pair in "$@"; do
    check="${pair%%=*}"
    if [[ "$check" == */* ]]; then [ -e "$check" ] && continue; else command -v "$check" >/dev/null 2>&1 && continue; fi
    echo "${pair#*=}"
  done
}
# Packages of these pairs that dpkg has unpacked or half-configured: an install under way
# (or one that failed midway). A command installed some other way is not dpkg's concern.
settling() {
  local pair
  for pair in "$@"; do
    case "$(dpkg-query -W -f='${db:Status-Abbrev}' "${pair#*=}" 2>/dev/null || true)" in
      iU*|iF*|iW*|it*|iH*) echo "${pair#*=}" ;;
    esac
  done
}
[ -z "$(missing "$@")" ] && [ -z "$(settling "$@")" ] && exit 0

LOCK="${TMPDIR:-/tmp}/waymark-apt.lock"
[ -e "$LOCK" ] || (umask 0; : >> "$LOCK")
exec 9<"$LOCK"
if ! flock -w 900 9; then
  echo "install-packages.sh: another install has held $LOCK for 15 minutes (fuser -v $LOCK); not installing: $*" >&2
  exit 1
fi
mapfile -t packages < <(missing "$@")
[ ${#packages[@]} -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "installing: ${packages[*]}" >&2
$SUDO apt-get update -qq >/dev/null 9>&-
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null 9>&-
