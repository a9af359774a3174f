#!/usr/bin/env python3
"""Writes conformance/edges.json and conformance/work-limit.json, the vectors of the rules an
independent port got wrong or found unsaid (issue 49): windows of 1-2 µs in far years,
whole-number constants written 7.0 or 1e2, `.`/`..` literal segments, one name for two
captures, and the exact count of the conflict check's work. Run it after changing a rule;
the files are committed, and both libraries' suites read them.

    python3 Tests/Scripts/make-conformance-edges.py
"""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOW = "2026-03-15T00:00:00Z"


def proceed(route, destination, params=None):
    return {"outcome": "proceed", "route": route, "destination": destination, "params": params or {},
            "path": ["home", destination], "tab": "home", "presentation": "push"}


UNKNOWN = {"outcome": "notFound", "reason": "unknownRoute"}


def row(label, link, expect, now=NOW, build="android 1.0.0"):
    return {"label": label, "build": build, "link": link, "context": {"satisfied": [], "now": now}, "expect": expect}


def write(name, document, literal=None):
    # One route or row a line: thousands of routes stay readable and their diffs small.
    def compact(value):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    lines = ["{"]
    keys = sorted(document)
    for position, key in enumerate(keys):
        value = document[key]
        comma = "," if position < len(keys) - 1 else ""
        if key in ("routes", "rows"):
            items = value["routes"] if key == "routes" else value
            head = ('  "routes": {"app":%s,"format":%s,"routes":[' % (json.dumps(value["app"]), json.dumps(value["format"]))
                    if key == "routes" else '  "rows": [')
            lines.append(head)
            lines += ["    " + compact(item) + ("," if index < len(items) - 1 else "") for index, item in enumerate(items)]
            lines.append("  ]}" + comma if key == "routes" else "  ]" + comma)
        else:
            lines.append("  %s: %s%s" % (json.dumps(key), compact(value), comma))
    lines.append("}")
    text = "\n".join(lines)
    for placeholder, written in (literal or {}).items():
        text = text.replace(json.dumps(placeholder), written)
    with open(os.path.join(ROOT, "conformance", name), "w") as out:
        out.write(text + "\n")


def edges():
    schema = {"format": "waymark.schema/1", "app": "edges", "platform": "android", "version": "1.0.0",
              "hosts": ["edges.example"], "schemes": ["edges"], "preconditions": [],
              "destinations": {"home": {"presentation": "tab", "tab": "home"}, "w": {"parent": "home"},
                               "n": {"parent": "home", "params": {"n": {"type": "int"}}},
                               "s": {"parent": "home", "params": {"s": {"type": "string"}}}, "lit": {"parent": "home"}}}
    windows = [  # (id, validFrom, validUntil, an instant inside): 1-2 µs windows where a binary Date cannot tell them apart
        ("w1000", "1000-01-01T00:00:00Z", "1000-01-01T00:00:00.000001Z", "1000-01-01T00:00:00Z"),
        ("w1716", "1716-06-01T12:00:00.000001Z", "1716-06-01T12:00:00.000002Z", "1716-06-01T12:00:00.000001Z"),
        ("w1720", "1720-01-01T00:00:00Z", "1720-01-01T00:00:00.000002Z", "1720-01-01T00:00:00.000001Z"),
        ("w2283", "2283-01-01T00:00:00.000001Z", "2283-01-01T00:00:00.000002Z", "2283-01-01T00:00:00.000001Z"),
        ("w2286", "2286-11-20T17:46:39.999999Z", "2286-11-20T17:46:40Z", "2286-11-20T17:46:39.999999Z"),
        ("w3000", "3000-01-01T00:00:00Z", "3000-01-01T00:00:00.000001Z", "3000-01-01T00:00:00Z"),
        ("w9999", "9999-12-31T23:59:59.999998Z", "9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.999998Z"),
    ]
    routes = [{"id": "home", "destination": "home", "patterns": ["/"]}]
    rows = []
    for route, start, end, inside in windows:
        routes.append({"id": route, "destination": "w", "patterns": ["/w/" + route[1:]], "validFrom": start, "validUntil": end})
        link = "edges://w/" + route[1:]
        rows.append(row("a window of 1-2 µs in %s: live inside it" % start[:4], link, proceed(route, "w"), now=inside))
        rows.append(row("a window of 1-2 µs in %s: ended at its end" % start[:4], link,
                        {"outcome": "notFound", "reason": "expired", "route": route}, now=end))
    routes += [
        {"id": "const-int", "destination": "n", "patterns": ["/c/int"], "params": {"n": {"const": 7}}},
        {"id": "const-fraction", "destination": "n", "patterns": ["/c/fraction"], "params": {"n": {"const": "@7.0@"}}},
        {"id": "const-exponent", "destination": "n", "patterns": ["/c/exponent"], "params": {"n": {"const": "@1e2@"}}},
        {"id": "dot", "destination": "lit", "patterns": ["/d/./x", "/d/dot"]},
        {"id": "dot-dot", "destination": "lit", "patterns": ["/d/../x", "/d/dotdot"]},
        {"id": "three-dots", "destination": "lit", "patterns": ["/e/..."]},
        {"id": "dot-first", "destination": "lit", "patterns": ["/e/.a"]},
        {"id": "dot-last", "destination": "lit", "patterns": ["/e/a."]},
        {"id": "two-captures", "destination": "s", "patterns": ["/dup/:s/:s", "/dup/one"], "params": {"s": {"const": "x"}}},
        {"id": "capture-and-rest", "destination": "s", "patterns": ["/dupr/:s/*s", "/dupr/one"], "params": {"s": {"const": "x"}}},
    ]
    rows += [
        row("a whole-number constant written 7", "edges://c/int", proceed("const-int", "n", {"n": 7})),
        row("a constant written 7.0 is not a whole number: the route is left out", "edges://c/fraction", UNKNOWN),
        row("a constant written 1e2 is not a whole number: the route is left out", "edges://c/exponent", UNKNOWN),
        row("a literal . segment makes the pattern invalid: the whole route is left out", "edges://d/dot", UNKNOWN),
        row("a literal .. segment makes the pattern invalid: the whole route is left out", "edges://d/dotdot", UNKNOWN),
        row("... is an ordinary literal", "edges://e/...", proceed("three-dots", "lit")),
        row(".a is an ordinary literal", "https://edges.example/e/.a", proceed("dot-first", "lit")),
        row("a. is an ordinary literal", "https://edges.example/e/a.", proceed("dot-last", "lit")),
        row("one name for two captures makes the pattern invalid: the whole route is left out", "edges://dup/one", UNKNOWN),
        row("one name for a capture and a rest: the same", "edges://dupr/one", UNKNOWN),
    ]
    write("edges.json", {
        "format": "waymark.conformance/1", "name": "edges",
        "description": "Rules settled after an independent port disagreed or found the docs silent (written by Tests/Scripts/make-conformance-edges.py): windows of 1-2 µs in the years 1000 to 9999, compared as whole microseconds; a whole-number constant is a JSON number without a fraction or an exponent (7.0 and 1e2 are not); a literal . or .. segment makes a pattern invalid, ... and .a do not; one name for two captures of a pattern makes it invalid.",
        "schemas": [schema], "routes": {"format": "waymark.routes/1", "app": "edges", "routes": routes}, "rows": rows,
    }, literal={"@7.0@": "7.0", "@1e2@": "1e2"})


def work_limit():
    hosts = ["h%d.limits.example" % index for index in range(12)]
    schema = {"format": "waymark.schema/1", "app": "limits", "platform": "android", "version": "1.0.0", "hosts": hosts,
              "schemes": ["wl"], "preconditions": [],
              "destinations": {"home": {"presentation": "tab", "tab": "home"}, "a": {"parent": "home"}, "b": {"parent": "home"}}}

    def subset(mask):
        return [hosts[bit] for bit in range(12) if mask >> bit & 1]

    # Shape /a: 2,001 routes, each with its own host list (masks 1, 2, 3, …: never one within an
    # earlier one, so none is shadowed): 0 + 1 + … + 2,000 = 2,001,000 comparisons. Shape /b:
    # b0 (the custom scheme alone), then 2,000 more, the same again: 4,002,000 in all, past the
    # 4,000,000 once /b has been swept, so /b's first route is reported and left out.
    routes = [{"id": "a%d" % index, "destination": "a", "patterns": ["/a"], "hosts": subset(index + 1)} for index in range(2001)]
    routes.append({"id": "b0", "destination": "b", "patterns": ["/b"], "schemes": ["wl"], "hosts": []})
    routes += [{"id": "b%d" % index, "destination": "b", "patterns": ["/b"], "hosts": subset(index), "schemes": []} for index in range(1, 2001)]
    rows = [
        row("2,001 routes of one shape with their own lists cost 2,001,000 comparisons, under the limit: checked and kept",
            "https://h0.limits.example/a", proceed("a0", "a")),
        row("the earliest route of the shape that takes the link wins", "https://h1.limits.example/a", proceed("a1", "a")),
        row("the second shape brings the count to 4,002,000: its first route is reported tooComplex and left out",
            "wl://b", UNKNOWN),
        row("the shape's other routes stay", "https://h1.limits.example/b", proceed("b2", "b")),
        row("the shape's other routes stay (the earliest that takes the link)", "https://h0.limits.example/b", proceed("b1", "b")),
    ]
    write("work-limit.json", {
        "format": "waymark.conformance/1", "name": "work-limit",
        "description": "The conflict check's work counted exactly (docs/validation.md; written by Tests/Scripts/make-conformance-edges.py): each route the sweep checks costs one comparison per different link list among the routes of its shape checked before it; past 4,000,000 in a document the first route of the shape that passed it is reported tooComplex and left out, and only it.",
        "schemas": [schema], "routes": {"format": "waymark.routes/1", "app": "limits", "routes": routes}, "rows": rows,
    })


if __name__ == "__main__":
    edges()
    work_limit()
