#!/usr/bin/env bash
# make test-console: the marketing console in headless Chromium, driven by Selenium.
# Installs Debian's chromium and chromium-driver when missing, python3-venv when venv
# cannot be made, and Selenium (from PyPI, pinned) into .venv-selenium.
# Usage: console-check.sh WAYMARK_BINARY [SCREENSHOTS]
set -euo pipefail
cd "$(dirname "$0")/../.."
bash Tests/Scripts/install-packages.sh chromium=chromium chromedriver=chromium-driver
bash Tests/Scripts/python-tools.sh selenium
# Selenium is told where chromedriver is: it never downloads a driver or a browser.
export SE_OFFLINE=true
exec .venv-selenium/bin/python Tests/Scripts/console-check.py "$@"
