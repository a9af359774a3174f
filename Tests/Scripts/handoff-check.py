#!/usr/bin/env python3
"""The iOS hand-off page in headless Chromium (docs/landing.md, "Deferred links"): a live
daemon, an iPhone's User-Agent, a link with a preview and a campaign.

  1. The page renders the route's preview, runs within its policy (no violation reported,
     the script allowed by its hash), and its "Get the app" link goes to the App Store with
     `ct` = the link's utm_campaign.
  2. Clicked, it puts the hand-off text on the clipboard — read back here — and then
     navigates to that App Store address (seen as the browser's request for it).
  3. Without JavaScript the same link is a plain link to the store.
  4. Hostile titles are text on the page, not markup.

WaymarkClientTests' DeferredLinkTests take the text the page carries to the screen the link
opens; this check shows the browser copies exactly that text.

    .venv-selenium/bin/python Tests/Scripts/handoff-check.py WAYMARK_BINARY
"""
import json
import os
import shutil
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.dirname(__file__))
import waymark_daemon  # noqa: E402

IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
STORE = "https://apps.apple.com/app/id6450000000"


def fail(message):
    print("handoff-check: FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def browser(port, javascript=True):
    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    origin = "http://storefront.example:%d" % port
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--lang=en-US",
                     "--user-agent=" + IPHONE, "--host-resolver-rules=MAP storefront.example 127.0.0.1",
                     # The Clipboard API needs a secure context; TLS ends in front of Waymark in production.
                     "--unsafely-treat-insecure-origin-as-secure=" + origin]:
        options.add_argument(argument)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": origin, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    return driver, origin


def requested(driver, prefix):
    """The documents the browser asked for whose address starts with `prefix`."""
    found = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent" and message["params"].get("type") == "Document":
            url = message["params"]["request"]["url"]
            if url.startswith(prefix):
                found.append(url)
    return found


def went_to_store(driver):
    """The App Store documents the browser asked for, waiting up to 10 s for the first."""
    deadline = time.time() + 10
    went = []
    while time.time() < deadline and not went:
        went = requested(driver, STORE)
        time.sleep(0.2)
    return went


def main():
    binary = sys.argv[1]
    work = tempfile.mkdtemp(prefix="waymark-handoff-")
    process, admin, port = waymark_daemon.start(binary, os.path.join(work, "data"), "--threads", "2")
    drivers = []
    try:
        if not port:
            fail("the daemon did not start")
        routes = json.load(open(os.path.join(waymark_daemon.EXAMPLE, "routes.json")))
        for route in routes["routes"]:
            if route["id"] == "product":
                route["preview"] = {"title": "Tea <img src=x onerror=alert(1)> sale", "description": "Every green tea, 20 % off"}
        status, body, _ = waymark_daemon.call(port, admin, "POST", "/v1/revisions", {"message": "preview", "routes": routes}, {"If-Match": '"rev-1"'})
        if status != 201:
            fail("publishing: %d %s" % (status, body[:300]))
        path = "/product/p42?utm_campaign=spring-26&utm_source=mail&email=a%40b.example"

        driver, origin = browser(port)
        drivers.append(driver)
        started = int(time.time())
        driver.get(origin + path)
        title = driver.find_element(By.TAG_NAME, "h1").text
        if title != "Tea <img src=x onerror=alert(1)> sale" or driver.find_elements(By.CSS_SELECTOR, "main img"):
            fail("the preview's title is not shown as text: %r" % title)
        if "Every green tea, 20 % off" not in driver.find_element(By.TAG_NAME, "main").text:
            fail("the preview's description is not shown")
        link = driver.find_element(By.ID, "get")
        href, handoff = link.get_attribute("href"), link.get_attribute("data-handoff")
        if href != STORE + "?ct=spring-26":
            fail("Get the app goes to %r" % href)
        if not handoff.startswith("https://storefront.example/product/p42#waymark=") or abs(int(handoff.split("=")[-1]) - started) > 60:
            fail("the hand-off text is %r" % handoff)
        errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        if errors:
            fail("the page broke its policy or failed: %r" % errors)
        link.click()
        went = went_to_store(driver)
        if went != [STORE + "?ct=spring-26"]:
            fail("the click did not go to the App Store: %r" % went)
        # The clipboard, read back in a page of the same origin.
        driver.get(origin + "/nothing-here")
        copied = driver.execute_async_script("const done = arguments[0]; navigator.clipboard.readText().then(done, (error) => done('error: ' + error));")
        if copied != handoff:
            fail("the clipboard holds %r, not the hand-off %r" % (copied, handoff))
        print("handoff-check: an iPhone's page shows the preview as text, within its policy; the click copied %r and went to %s"
              % (copied, went[0]))

        plain, _ = browser(port, javascript=False)
        drivers.append(plain)
        plain.get(origin + path)
        link = plain.find_element(By.ID, "get")
        if link.get_attribute("href") != STORE + "?ct=spring-26":
            fail("without JavaScript the link goes to %r" % link.get_attribute("href"))
        link.click()
        went = went_to_store(plain)
        if went != [STORE + "?ct=spring-26"]:
            fail("without JavaScript the link did not go to the App Store: %r" % went)
        print("handoff-check: without JavaScript, Get the app is a plain link to %s" % went[0])
        print("handoff-check: ok")
    finally:
        for driver in drivers:
            driver.quit()
        process.terminate()
        process.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
