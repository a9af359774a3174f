#!/usr/bin/env python3
"""The differential test of the two engines: 20,000 generated links (hostile mutations
included) across the example (manifests/storefront, both builds) and every conformance
file's schemas, resolved by the Swift CLI (`waymark resolve --links`) and by the JVM
library (dev.waymark.tools.ResolveLinks), each as the build's manifest would, each with
its shape as a phone would send it were it unknown (`--shapes`: LinkShape with the table's
words). Every result must be identical (the result contract, `detail` aside, and the shape);
any difference is printed with its link and the run fails.

usage: android-differential.py WAYMARK_BINARY CLASSPATH [LINKS]
"""
import json
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOTAL = int(sys.argv[3]) if len(sys.argv) > 3 else 20_000
rng = random.Random(35)

# What a hostile link carries: encodings of slashes, dots, controls, invisible and
# bidirectional characters, overlong and invalid UTF-8, ports, userinfo, fragments, raw
# characters that must be encoded, and case.
HOSTILE = [
    "%2F", "%2f", "%2E", "%2E%2E", "..", ".", "/./", "/../", "//", "%00", "%0A", "%0D%0A", "%1F", "%7F", "%C0%AF", "%C2%85",
    "%E2%80%A8", "%E2%80%AE", "%D8%9C", "%E2%81%A6", "%FF", "%F0%9F%98%80", "%C3%A9", "e%CC%81", "%E2%84%AB", "%20", "+",
    "%25", "%", "%G1", "%3A", "%40", "%5B", "%5D", "%23", "%3F", "%26", "%3D", "@", ":", ":443", ":0443", ":80", ":", "[", "]",
    "#", "#a#b", "?", "&", "&&", "=", "==", " ", "\t", "\n", "\u0000", "\u0085", "é", "😀", "\\", "<", ">", "\"", "{", "|",
    "~", "!", "$", "'", "(", ")", "*", ",", ";", "-", "_", "0", "-0", "9007199254740992", "9007199254740991",
    "-9007199254740991", "2147483648", "00", "p1", "P1", "A-1", "x" * 40,
]
QUERIES = ["?q=shoes", "?q=", "?q&q=b", "?&&q=a&&", "?Q=x", "?%71=x", "?q=a+b%2Bc", "?utm_source=x&q=1", "?q=%FF", "?q=%E2%80%AE",
           "?n=7", "?accent=%C3%A9", "?%C3%A9=x", "?code=SPRING", "?r=1&q=2", "?==", "?q==x"]


def mutate(link):
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        kind = rng.randrange(9)
        position = rng.randrange(len(link) + 1)
        if kind <= 2:
            link = link[:position] + rng.choice(HOSTILE) + link[position:]
        elif kind == 3 and link:
            link = link[:position] + link[position + 1:]
        elif kind == 4:
            link = "".join(c.swapcase() if rng.random() < 0.3 else c for c in link)
        elif kind == 5:
            link += rng.choice(QUERIES)
        elif kind == 6:
            link = link[:position]
        elif kind == 7:
            link = link + "/" + "a" * rng.choice([1, 100, 1000, 2000, 2030])
        else:
            scheme, _, rest = link.partition(":")
            link = rng.choice(["http", "HTTPS", "https", scheme.upper(), "other", "", "1x"]) + ":" + rest
    return link


def sample(capture):
    return rng.choice(["p1", "p42", "P1", "42", "0", "-1", "7", "a", "A-1", "abc-def", "spring-sale", "x" * 41, "é", "e%CC%81",
                       "%C3%A9", "123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-42661417400Z", "3", "-5", "6",
                       "a%2Fb", "ab", "cd", "b", "launch", "%E2%84%AB", "Å", "9007199254740991", "SPRING26", "a%20b"])


def links_for(schema, routes, seeds):
    """Links from the routes' own patterns on every declared origin, and the files' own rows."""
    origins = ["https://" + h for h in schema.get("hosts", [])]
    for s in schema.get("schemes", []):
        origins += [s + "://", s + ":/", s + ":"]
    paths = []
    for route in routes.get("routes", []):
        for pattern in route.get("patterns", []) if isinstance(route.get("patterns"), list) else []:
            if not isinstance(pattern, str):
                continue
            parts = []
            for part in pattern.strip("/").split("/"):
                if part.startswith(":"):
                    parts.append(sample(part))
                elif part.startswith("*"):
                    parts.append("/".join(sample(part) for _ in range(rng.choice([1, 2, 3]))))
                else:
                    parts.append(part)
            paths.append("/".join(p for p in parts if p))
    out = []
    for path in paths:
        for origin in origins:
            base = origin + path if not origin.startswith("https") else origin + "/" + path
            out.append(base)
    return out + seeds


def main():
    waymark, classpath = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="waymark-differential-")
    builds = []  # (label, schema path, routes path, schema json, routes json, seeds, now, preconditions)
    example = os.path.join(ROOT, "manifests/storefront")
    example_routes = json.load(open(os.path.join(example, "routes.json")))
    for version in ["5.2.0", "5.3.0"]:
        path = os.path.join(example, f"schema-ios-{version}.json")
        schema = json.load(open(path))
        builds.append((f"example ios {version}", path, os.path.join(example, "routes.json"), schema, example_routes, [],
                       "2026-03-15T00:00:00Z"))
    conformance = os.path.join(ROOT, "conformance")
    for name in sorted(os.listdir(conformance)):
        if not name.endswith(".json"):
            continue
        document = json.load(open(os.path.join(conformance, name)))
        if document.get("format") != "waymark.conformance/1":
            continue  # the planner's table has no links
        routes_path = os.path.join(work, name + ".routes.json")
        json.dump(document["routes"], open(routes_path, "w"))
        seeds = [row["link"] for row in document.get("rows", []) if "link" in row]
        nows = sorted({row["context"]["now"] for row in document.get("rows", [])})
        for index, schema in enumerate(document["schemas"]):
            schema_path = os.path.join(work, f"{name}.schema{index}.json")
            json.dump(schema, open(schema_path, "w"))
            builds.append((f"{name} {schema['platform']} {schema['version']}", schema_path, routes_path, schema, document["routes"],
                           seeds, rng.choice(nows)))
    jobs, swift_outputs, per_job = [], [], []
    contexts = 2
    share = TOTAL // (len(builds) * contexts)
    remainder = TOTAL - share * len(builds) * contexts
    for number, (label, schema_path, routes_path, schema, routes, seeds, now) in enumerate(builds):
        pool = links_for(schema, routes, seeds)
        for context in range(contexts):
            count = share + (1 if remainder > 0 else 0)
            remainder -= 1 if remainder > 0 else 0
            links = [mutate(rng.choice(pool)) for _ in range(count)]
            satisfied = [] if context == 0 else schema.get("preconditions", [])
            links_path = os.path.join(work, f"links{number}-{context}.jsonl")
            with open(links_path, "w") as f:
                for link in links:
                    f.write(json.dumps(link) + "\n")
            args = [waymark, "resolve", "--links", links_path, "--schema", schema_path, "--routes", routes_path, "--now", now, "--shapes"]
            if satisfied:
                args += ["--satisfied", ",".join(satisfied)]
            swift = subprocess.run(args, capture_output=True, text=True)
            if swift.returncode != 0:
                print(f"waymark resolve failed for {label}: {swift.stderr}", file=sys.stderr)
                return 1
            swift_outputs.append(swift.stdout.splitlines())
            out = os.path.join(work, f"jvm{number}-{context}.jsonl")
            jobs.append({"schema": schema_path, "routes": routes_path, "links": links_path, "now": now, "satisfied": satisfied, "shapes": True, "out": out})
            per_job.append((label + (" (all preconditions satisfied)" if satisfied else ""), links))
    jobs_path = os.path.join(work, "jobs.json")
    json.dump(jobs, open(jobs_path, "w"))
    jvm = subprocess.run(["java", "-cp", classpath, "dev.waymark.tools.ResolveLinksKt", jobs_path], capture_output=True, text=True)
    if jvm.returncode != 0:
        print(f"the JVM resolver failed: {jvm.stderr}", file=sys.stderr)
        return 1
    compared, differences, outcomes, shaped = 0, [], {}, set()
    for (label, links), swift_lines, job in zip(per_job, swift_outputs, jobs):
        jvm_lines = open(job["out"]).read().splitlines()
        if len(swift_lines) != len(links) or len(jvm_lines) != len(links):
            print(f"{label}: {len(links)} links, {len(swift_lines)} Swift results, {len(jvm_lines)} JVM results", file=sys.stderr)
            return 1
        for link, s, j in zip(links, swift_lines, jvm_lines):
            ours, theirs = json.loads(s), json.loads(j)
            ours.pop("detail", None)
            compared += 1
            key = ours.get("reason", ours["outcome"])
            shaped.add(ours.get("shape"))
            outcomes[key] = outcomes.get(key, 0) + 1
            if ours != theirs:
                differences.append((label, link, ours, theirs))
    print(f"differential: {compared} links across {len(builds)} builds × {contexts} contexts; outcomes "
          + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    for label, link, ours, theirs in differences[:20]:
        print(f"DIFFERENT in {label}: {json.dumps(link)}\n  swift: {json.dumps(ours, sort_keys=True)}\n  jvm:   {json.dumps(theirs, sort_keys=True)}")
    if compared != TOTAL:
        print(f"expected {TOTAL} links, compared {compared}", file=sys.stderr)
        return 1
    if differences:
        print(f"{len(differences)} of {compared} links resolve differently", file=sys.stderr)
        return 1
    print(f"identical: all {compared} results, and their shapes ({len(shaped)} distinct)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
