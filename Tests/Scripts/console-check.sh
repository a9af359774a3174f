#!/usr/bin/env bash
# make test-console: the marketing console in headless Chromium, driven by Selenium.
# Installs Debian's chromium and chromium-driver when missing, python3-venv when venv
# cannot be made, and Selenium (from PyPI, pinned) into .venv beside schemathesis.
# Usage: console-check.sh WAYMARK_BINARY [SCREENSHOTS]
set -euo pipefail
cd "$(dirname "$0")/../.."
SELENIUM_VERSION=${SELENIUM_VERSION:-4.27.1}
bash Tests/Scripts/install-packages.sh chromium=chromium chromedriver=chromium-driver
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  # Debian splits venv's ensurepip into python3-venv; no command names it, so force the install.
  bash Tests/Scripts/install-packages.sh no-such-command=python3-venv
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
if ! .venv/bin/python -c "import selenium, sys; sys.exit(selenium.__version__ != '$SELENIUM_VERSION')" 2>/dev/null; then
  .venv/bin/pip install -q --disable-pip-version-check "selenium==$SELENIUM_VERSION"
fi
# Selenium is told where chromedriver is: it never downloads a driver or a browser.
export SE_OFFLINE=true
exec .venv/bin/python Tests/Scripts/console-check.py "$@"
