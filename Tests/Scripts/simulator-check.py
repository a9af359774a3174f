#!/usr/bin/env python3
"""The runnable example end to end: `waymark-simulator` plays an app against a live
`waymark serve` (the WaymarkClient loop over real HTTP, URLSession as the transport):
three doors to one screen give one plan, a login gate is passed and resumed, a broken and
an unknown link end notFound, a sheet is presented — and the server's telemetry counts,
read back, are exactly what the simulator reported.

    python3 Tests/Scripts/simulator-check.py .build/debug/waymark .build/debug/waymark-simulator
"""
import datetime
import json
import subprocess
import sys
import tempfile

import waymark_daemon

LINKS = [
    ("https://storefront.example/orders/42", "navigated", "selectTab(account); setStack(account: orders > orderDetail(orderId=42), keeping 0)"),
    ("storefront://p/p12", "navigated", "selectTab(home); setStack(home: home > product(id=p12), keeping 1)"),
    ("push:https://storefront.example/p/p12", "navigated", "nothing to do"),
    ("app:product?id=p12", "navigated", "nothing to do"),
    ("https://storefront.example/p/bad", "notFound(validationFailed)", None),
    ("https://storefront.example/nowhere", "notFound(unknownRoute)", None),
    ("storefront://settings", "navigated", "present(sheet[settings])"),
]


def main():
    waymark, simulator = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as data, tempfile.TemporaryDirectory() as cache:
        process, token, port = waymark_daemon.start(waymark, data)
        try:
            assert port and token, "the daemon did not start"
            started = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=1)
            output = subprocess.run([simulator, "--server", "http://127.0.0.1:%d" % port, "--token", token, "--telemetry-token", token,
                                     "--cache", cache, *[link for link, _, _ in LINKS]],
                                    capture_output=True, text=True, timeout=60, check=True).stdout
            blocks = output.split("→ ")[1:]
            assert len(blocks) == len(LINKS), output
            for (link, result, plan), block in zip(LINKS, blocks):
                assert block.startswith(link + "\n"), block
                assert "  result: %s " % result in block, (link, block)
                if plan:
                    assert "  plan: %s\n" % plan in block, (link, block)
            assert "  gate: auth for orderDetail — login (succeed)" in blocks[0], blocks[0]
            assert "telemetry: 7 resolutions; delivered(events: 7, resolutions: 7, rejected: 0)" in output, output
            query = "/v1/telemetry/counts?groupBy=entry,outcome&from=%s" % started.strftime("%Y-%m-%dT%H:%M:%SZ")
            status, body, _ = waymark_daemon.call(port, token, "GET", query)
            assert status == 200, body
            counted = {(group["key"]["entry"], group["key"]["outcome"]): group["total"] for group in json.loads(body)["groups"]}
            expected = {("universalLink", "proceed"): 1, ("scheme", "proceed"): 2, ("push", "proceed"): 1, ("inApp", "proceed"): 1,
                        ("universalLink", "notFound"): 2}
            assert counted == expected, counted
        finally:
            process.terminate()
            process.wait()
    print("simulator-check: %d links through the simulator against a live daemon: plans, the login gate and %d resolutions counted by the server as reported"
          % (len(LINKS), sum(expected.values())))


if __name__ == "__main__":
    main()
