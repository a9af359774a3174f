from hostile_common import *  # noqa: F401,F403


def hostile_forwards(binary, scratch):
    data = os.path.join(scratch, "forwards")
    daemon = Daemon(binary, data)
    follower = token(binary, data, "forward-follower", "replication", rate="unlimited")
    reader = token(binary, data, "forward-reader", "telemetry:read", rate="unlimited")
    node = b"0123456789abcdef0123456789abcdef"
    minute = int(time.time()) // 60 - 1
    NOT_FOUND, UNKNOWN_ROUTE = 2, 2

    def post(through, batches):
        return call(daemon.port, follower, "POST", "/v1/replication/telemetry", forward_bytes(node, through, batches),
                    {"Content-Type": "application/octet-stream"}, timeout=120)

    def state():
        _, counts, _ = call(daemon.port, reader, "GET", "/v1/telemetry/counts?groupBy=route&from=%s&to=%s" % (iso(minute * 60 - 3_600), iso(minute * 60 + 600)))
        _, shapes, _ = call(daemon.port, reader, "GET", "/v1/telemetry/unknown-links?limit=20")
        return json_of(counts), [shape["shape"] for shape in json_of(shapes)["shapes"]]

    clamped_figures = []
    clamped = [
        ("1,000 shapes of 4,000,000,000", [{"revision": 2, "appVersion": b"5.3.0",
                                            "tallies": [(minute, 0, NOT_FOUND, UNKNOWN_ROUTE, 0, 0, 4_000_000_000)],
                                            "shapes": [(minute, 0, 4_000_000_000, ("/x%04d/deals" % index).encode()) for index in range(1_000)]}]),
        ("shapes past their events", [{"revision": 2, "appVersion": b"5.3.0", "tallies": [(minute, 0, NOT_FOUND, UNKNOWN_ROUTE, 0, 0, 5)],
                                       "shapes": [(minute, 0, 500, b"/deals/:param")]}]),
        ("4,000,000,000 events in one minute", [{"revision": 2, "appVersion": b"5.3.0", "tallies": [(minute, 0, 0, 0, 0, 0, 4_000_000_000)]}]),
    ]
    through = 0
    for what, batches in clamped:
        through += 1
        status, body, _ = post(through, batches)
        said = json_of(body).get("clamped") if status == 200 else None
        if not said or not (said.get("events") or said.get("shapeCounts")):
            fail("a forward of %s answered %d %s" % (what, status, body[:300]))
        clamped_figures.append("%s: %s" % (what, ", ".join("%s %s" % (key, "{:,}".format(value)) for key, value in sorted(said.items()) if value)))
    if said.get("events") != 4_000_000_000 - 10_000_000:
        fail("4,000,000,000 events in one minute were clamped by %s, not to the 10,000,000 a minute holds" % said.get("events"))
    # The last one again (a retry after a lost answer): answered, not counted or clamped twice.
    status, body, _ = post(through, clamped[-1][1])
    if status != 200:
        fail("a forward retried answered %d %s" % (status, body[:300]))
    through += 1
    status, body, _ = post(through, [{"revision": 2, "appVersion": b"5.3.0", "tallies": [(minute, 0, NOT_FOUND, UNKNOWN_ROUTE, 0, 0, 5)],
                                      "shapes": [(minute, 0, 1, b"/x0000/<b>call +1 555 0100</b>")]}])
    if status != 200:
        fail("a forward of a shape of raw text answered %d %s" % (status, body[:300]))
    refused_figures = []
    refused_forwards = [
        ("a slot its batch does not list", [{"revision": 2, "routes": [b"product"], "tallies": [(minute, 0, 0, 0, 40, 0, 1)]}]),
        ("60,001 route names in a batch", [{"revision": 2, "routes": [b"product"] * 60_001, "tallies": [(minute, 0, 0, 0, 2, 0, 1)]}]),
        ("1,000 route names for one tally", [{"revision": 2, "routes": [b"r%d" % index for index in range(1_000)], "tallies": [(minute, 0, 0, 0, 2, 0, 1)]}]),
        ("10,001 shapes", [{"revision": 2, "tallies": [(minute, 0, NOT_FOUND, UNKNOWN_ROUTE, 0, 0, 5)],
                            "shapes": [(minute, 0, 1, b"/s%d" % index) for index in range(10_001)]}]),
        ("a forward inside a forward, three deep", "nested"),
    ]

    def nested(through, depth):
        import struct
        inner = forward_bytes(node, through, [{"revision": 2, "tallies": [(minute, 0, 0, 0, 0, 0, 1)]}])
        for _ in range(depth):
            payload = struct.pack("<Q", 0) + b"\xff" + inner
            body = b"WMFWD001" + struct.pack("<H", len(node)) + node + struct.pack("<QI", through, 1) + struct.pack("<II", len(payload), crc32c(payload)) + payload
            inner = body + struct.pack("<I", crc32c(body))
        return inner

    for what, batches in refused_forwards:
        through += 1
        if batches == "nested":
            status, body, _ = call(daemon.port, follower, "POST", "/v1/replication/telemetry", nested(through, 3),
                                   {"Content-Type": "application/octet-stream"}, timeout=120)
        else:
            status, body, _ = post(through, batches)
        code = (json_of(body).get("error") or {}).get("code")
        if status != 400 or code != "invalidForward":
            fail("a forward of %s answered %d %s" % (what, status, body[:300]))
        refused_figures.append(what)
    # Made-up names in one minute: counted as route other, in one cell, not a million.
    names = [("made-up-%d" % index).encode() for index in range(60_000)]
    made_up = [{"revision": 2, "appVersion": b"5.3.0", "routes": names[start:start + 60_000],
                "tallies": [(minute, 0, 0, 0, 2 + index, 0, 1) for index in range(len(names[start:start + 60_000]))]}
               for start in range(0, len(names), 60_000)]
    status, body, _ = post(through + 1, made_up)
    if status != 200:
        fail("a forward of 60,000 made-up route names answered %d %s" % (status, body[:300]))
    cells_after_names = daemon.metric("waymark_telemetry_cells")
    honest = [{"revision": 2, "appVersion": b"5.3.0", "routes": [b"product"],
               "tallies": [(minute, 0, 0, 0, 2, 0, 7), (minute, 0, NOT_FOUND, UNKNOWN_ROUTE, 0, 0, 3)],
               "shapes": [(minute, 0, 3, b"/deals/:param")]}]
    status, body, _ = post(through + 2, honest)
    if status != 200:
        fail("an honest forward answered %d %s" % (status, body[:300]))
    refused = daemon.metric("waymark_telemetry_forwards_refused_total")
    clamped_total = daemon.metric("waymark_telemetry_forwards_clamped_total")
    counts, shapes = state()
    alive = daemon.alive()
    daemon.stop()
    if not alive:
        fail("the daemon died under hostile forwards")
    groups = {group["key"]["route"]: sum(point["count"] for point in group["series"]) if "series" in group else group.get("total", 0)
              for group in counts.get("groups", [])}
    if refused != len(refused_forwards) or clamped_total != len(clamped):
        fail("after %d forwards past a bound and %d no follower makes, clamped_total is %s and refused_total %s"
             % (len(clamped), len(refused_forwards), clamped_total, refused))
    if any(shape.startswith("/x") or "<" in shape for shape in shapes) or "/deals/:param" not in shapes:
        fail("after hostile forwards the unknown links are %s" % shapes[:20])
    if groups.get("product") != 7 or groups.get("other") != 60_000 or any(name.startswith("made-up") for name in groups):
        fail("after the forwards the counts by route are %s" % dict(list(groups.items())[:10]))
    if cells_after_names is not None and cells_after_names > 1_000:
        fail("60,000 made-up names took %d cells" % cells_after_names)
    print("hostile: forwards past a bound counted less what a phone's batches could not carry (%s); the unknown links then %s; "
          "refused whole what no follower makes (400 invalidForward, counted %d): %s; 60,000 made-up route names counted as other (%s cells); "
          "an honest forward counted (product 7, /deals/:param listed)"
          % ("; ".join(clamped_figures), ", ".join(shapes[:3]), refused, "; ".join(refused_figures), cells_after_names))
