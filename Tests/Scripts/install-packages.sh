#!/usr/bin/env bash
# Installs Debian packages when their command is missing: install-packages.sh CMD=PACKAGE ...
# A CMD with a / is a file the package installs (a jar has no command): it is checked to exist.
set -euo pipefail
missing=()
for pair in "$@"; do
  check="${pair%%=*}"
  if [[ "$check" == */* ]]; then [ -e "$check" ] && continue; else command -v "$check" >/dev/null 2>&1 && continue; fi
  missing+=("${pair#*=}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "installing: ${missing[*]}" >&2
$SUDO apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
