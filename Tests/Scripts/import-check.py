#!/usr/bin/env python3
"""Moving in from Firebase Dynamic Links, and changing one route at a time, on a live daemon
with the CLI and plain HTTP as a team would use them (docs/migrating.md, docs/api.md).

  1. The Takeout fixture (takeout-fixture.py: 543 links of every kind): `waymark import
     firebase --json` puts each row where the fixture says (imported, or its reason), against
     three builds (iOS 5.2.0 and 5.3.0, Android) registered with the short-link host.
  2. Every imported link resolves, on every build, to what its deep link resolved to before
     (`waymark resolve --links`: outcome, destination and params) — a build without the
     deep link's route does not open the short link either.
  3. The document validates and publishes (`waymark publish`), and every imported link lands
     (iPhone, Android, desktop: a redirect, never the not-found page), Google Play's Install
     Referrer carrying the campaign the link had in Firebase (the route's `utm`).
  4. Importing the same file again into the published routes (`--server`: the current
     routes and every build from the daemon) changes nothing: the same document, every
     link "unchanged", and `waymark publish` answers unchanged.
  5. A 20 MB export (the same links, then archived rows of long fields): the same result;
     its time and peak memory printed.
  6. One route at a time: 50 concurrent PUTs of different routes from 10 tokens while a
     marketer publishes whole documents (If-Match; rebased over PUTs of other routes, else
     refetching on 412): at most 50 revisions
     of PUTs, every route in the manifest once, none lost, none applied twice (the audit log
     names each once), the marketer's routes all there; an invalid PUT changes nothing and
     names the problem; DELETE and the batch; `waymark route put|delete`.

Usage: import-check.py WAYMARK_BINARY
"""
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import waymark_daemon  # noqa: E402

HOST = "links.storefront.example"
HERE = os.path.dirname(os.path.abspath(__file__))


def fail(message):
    print("import-check: FAIL: " + message)
    sys.exit(1)


def run(binary, *arguments, check=True):
    result = subprocess.run([binary, *arguments], capture_output=True, text=True)
    if check and result.returncode != 0:
        fail("waymark %s exited %d: %s" % (" ".join(arguments[:2]), result.returncode, (result.stderr or result.stdout)[-2000:]))
    return result


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    binary = os.path.abspath(sys.argv[1])
    scratch = tempfile.mkdtemp(prefix="waymark-import-")
    data = os.path.join(scratch, "data")
    process, token, port = waymark_daemon.start(binary, data)
    server = "http://127.0.0.1:%d" % port if port else None
    try:
        if not port or not token:
            fail("the daemon did not start")

        def call(method, path, body=None, headers=None, who=None):
            status, answer, got = waymark_daemon.call(port, who or token, method, path, body, headers)
            try:
                return status, json.loads(answer) if answer else None, got
            except ValueError:
                return status, answer, got

        # The builds, claiming the short-link host as their apps' associated domains do.
        schemas = []
        for name, platform, version in [("schema-ios-5.2.0.json", "ios", "5.2.0"), ("schema-ios-5.3.0.json", "ios", "5.3.0"),
                                        ("schema-ios-5.3.0.json", "android", "53")]:
            schema = json.load(open(os.path.join(waymark_daemon.EXAMPLE, name)))
            schema.update({"platform": platform, "version": version})
            schema["hosts"].append(HOST)
            path = os.path.join(scratch, "%s-%s.json" % (platform, version))
            json.dump(schema, open(path, "w"))
            schemas.append(path)
            status, answer, _ = call("PUT", "/v1/schemas/%s/%s" % (platform, version), schema)
            if status not in (200, 201):
                fail("registering %s %s: %d %s" % (platform, version, status, answer))
        schema_options = [option for path in schemas for option in ("--schema", path)]

        def current():
            status, revisions, _ = call("GET", "/v1/revisions")
            number = revisions["current"] if isinstance(revisions, dict) and "current" in revisions else None
            status, revision, _ = call("GET", "/v1/revisions/%d" % number)
            return number, revision["routes"]

        number, before = current()
        before_path = os.path.join(scratch, "before.json")
        json.dump(before, open(before_path, "w"))

        # 1. The fixture, each row where it should be.
        fixture, expected_path = os.path.join(scratch, "takeout.csv"), os.path.join(scratch, "expected.json")
        subprocess.run([sys.executable, os.path.join(HERE, "takeout-fixture.py"), fixture, expected_path], check=True)
        expected = json.load(open(expected_path))
        after_path = os.path.join(scratch, "after.json")
        result = run(binary, "import", "firebase", fixture, "--host", HOST, "--routes", before_path, *schema_options,
                     "--json", "--output", after_path)
        report = json.loads(result.stdout)
        got = {item["row"]: "imported" for item in report["imported"]}
        got.update({item["row"]: item["reason"] for item in report["skipped"]})
        wrong = [(item["row"], item["expected"], got.get(item["row"])) for item in expected if got.get(item["row"]) != item["expected"]]
        if wrong:
            fail("%d row(s) not as the fixture expects (row, expected, got): %s" % (len(wrong), wrong[:10]))
        if not report["validation"].get("valid"):
            fail("the imported document does not validate: %s" % report["validation"]["errors"][:3])
        counts = report["counts"]
        if counts["rows"] != len(expected) or counts["imported"] < 300:
            fail("counts: %s" % counts)
        unanswered = [item for item in report["skipped"] if item["reason"] == "unanswered"]
        if not all(item.get("shape") for item in unanswered):
            fail("an unanswered link without its shape")
        print("import-check: %d rows: %s" % (counts["rows"], ", ".join("%s %d" % (k, v) for k, v in sorted(counts.items()) if v and k != "rows")))

        # 2. Every imported link, on every build, opens what its deep link opened.
        imported = [item for item in expected if item["expected"] == "imported"]
        shorts = os.path.join(scratch, "shorts.jsonl")
        deeps = os.path.join(scratch, "deeps.jsonl")
        with open(shorts, "w") as out:
            out.writelines(json.dumps(item["shortLink"].replace("HTTPS://LINKS.STOREFRONT.EXAMPLE", "https://" + HOST)) + "\n" for item in imported)
        with open(deeps, "w") as out:
            out.writelines(json.dumps(item["link"]) + "\n" for item in imported)
        compared = 0
        for path in schemas:
            new = run(binary, "resolve", "--links", shorts, "--schema", path, "--routes", after_path, "--satisfied", "auth").stdout.splitlines()
            old = run(binary, "resolve", "--links", deeps, "--schema", path, "--routes", before_path, "--satisfied", "auth").stdout.splitlines()
            if len(new) != len(imported) or len(old) != len(imported):
                fail("resolve --links gave %d and %d lines for %d links" % (len(new), len(old), len(imported)))
            for item, a, b in zip(imported, new, old):
                a, b = json.loads(a), json.loads(b)
                key = lambda r: (r["outcome"], r.get("destination"), json.dumps(r.get("params"), sort_keys=True))
                if key(a) != key(b):
                    fail("%s on %s: the short link gives %s, its deep link %s gave %s" % (item["shortLink"], os.path.basename(path), key(a), item["link"], key(b)))
                compared += 1
        print("import-check: %d imported links resolve as their deep links did, on %d builds (%d comparisons)" % (len(imported), len(schemas), compared))

        # 3. It publishes, and every imported link lands.
        result = run(binary, "publish", after_path, "--server", server, "--token", token, "--message", "Imported from Firebase", "--json")
        published = json.loads(result.stdout)["number"]
        agents = {"iphone": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1",
                  "android": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/120.0 Mobile Safari/537.36",
                  "desktop": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36"}
        landed = referred = 0
        for item in imported:
            path = "/" + item["shortLink"].split("/", 3)[3]
            for name, agent in agents.items():
                status, body, headers = waymark_daemon.call(port, None, "GET", path, headers={"Host": HOST, "User-Agent": agent})
                location = headers.get("Location", "")
                if status not in (200, 302) or b"not found" in body.lower() or "notfound" in location.lower():
                    fail("%s lands as %d %s" % (item["shortLink"], status, location))
                # The campaign set in Firebase travels with the install, from the route's utm.
                if name == "android" and location.startswith("https://play.google.com/") and re.fullmatch(r"[A-Za-z0-9._~-]{1,100}", item["utm_campaign"]):
                    if "utm_campaign%3D" + item["utm_campaign"] not in location:
                        fail("%s: Play's referrer lacks the link's Firebase campaign %s: %s" % (item["shortLink"], item["utm_campaign"], location))
                    referred += 1
                landed += 1
        if referred < 20:
            fail("only %d Android landings carried a Firebase campaign" % referred)
        print("import-check: revision %d published; %d landings of imported links, none not found; %d Install Referrers carry the Firebase campaign" % (published, landed, referred))

        # 4. The same file again: nothing changes.
        again_path = os.path.join(scratch, "again.json")
        # This time from the server itself: its current routes and every registered build.
        result = run(binary, "import", "firebase", fixture, "--host", HOST, "--server", server, "--token", token, "--json", "--output", again_path)
        again = json.loads(result.stdout)
        if json.load(open(again_path)) != json.load(open(after_path)):
            fail("importing the file again changed the document")
        if again.get("base") != published:
            fail("the report from the server does not name its base revision %d: %s" % (published, again.get("base")))
        if again["counts"]["unchanged"] != counts["imported"]:
            fail("importing again: %s" % again["counts"])
        result = run(binary, "publish", again_path, "--server", server, "--token", token, "--base", str(again["base"]), "--json")
        if not json.loads(result.stdout).get("unchanged"):
            fail("publishing the second import made a revision: %s" % result.stdout)
        # Changes made on the server after the import, then the import published with its base:
        # rebased over a change of another route (both kept); refused over a change of one of
        # the imported routes (never an overwrite of it).
        status, answer, _ = call("PUT", "/v1/routes/made-meanwhile", {"patterns": ["/meanwhile"], "destination": "cart"})
        edited = json.load(open(again_path))
        edited["routes"] = [r for r in edited["routes"] if r["id"] != "made-meanwhile"] + [{"id": "import-extra", "patterns": ["/import/extra"], "destination": "cart"}]
        json.dump(edited, open(again_path, "w"))
        rebased = run(binary, "publish", again_path, "--server", server, "--token", token, "--base", str(again["base"]), "--json", check=False)
        ids = [r["id"] for r in current()[1]["routes"]]
        if status != 201 or rebased.returncode != 0 or json.loads(rebased.stdout).get("rebasedFrom") != again["base"] \
                or "made-meanwhile" not in ids or "import-extra" not in ids:
            fail("the import published over a change of another route since its base: PUT %d, publish exit %d %s" % (status, rebased.returncode, rebased.stdout[-300:]))
        base_now, mine = current()
        taken = next(r for r in mine["routes"] if r["id"].startswith("link."))
        taken["notes"] = "Reviewed: keep"
        json.dump(mine, open(again_path, "w"))
        status, _, _ = call("DELETE", "/v1/routes/" + taken["id"])
        stale = run(binary, "publish", again_path, "--server", server, "--token", token, "--base", str(base_now), check=False)
        if status != 201 or stale.returncode != 1 or taken["id"] in [r["id"] for r in current()[1]["routes"]]:
            fail("a publish that edited a route a change since deleted: DELETE %d, publish exit %d" % (status, stale.returncode))
        call("DELETE", "/v1/routes/made-meanwhile")
        call("DELETE", "/v1/routes/import-extra")
        print("import-check: published with its base after a PUT of another route: rebased, both kept; after a DELETE of a route it edited: 412, the delete kept")
        print("import-check: imported again: the same document, %d links unchanged, publish unchanged" % again["counts"]["unchanged"])

        # 5. A 20 MB export: the same links after archived rows of long fields.
        big = os.path.join(scratch, "takeout-20mb.csv")
        subprocess.run([sys.executable, os.path.join(HERE, "takeout-fixture.py"), big, os.path.join(scratch, "big.json"), "--pad-to", "20"], check=True)
        started = time.time()
        child = subprocess.run([binary, "import", "firebase", big, "--host", HOST, "--routes", before_path, *schema_options, "--json", "--dry-run"],
                               capture_output=True, text=True)
        took = time.time() - started
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if child.returncode != 0:
            fail("the 20 MB export: exit %d %s" % (child.returncode, child.stderr[-500:]))
        big_counts = json.loads(child.stdout)["counts"]
        if big_counts["imported"] != counts["imported"] or big_counts["archived"] <= counts["archived"]:
            fail("the 20 MB export: %s" % big_counts)
        print("import-check: a %.1f MB export (%d rows) imported in %.2f s, peak RSS of the CLI runs so far %.0f MB"
              % (os.path.getsize(big) / 1e6, big_counts["rows"], took, peak))

        # 6. One route at a time.
        tokens = []
        for index in range(10):
            made = run(binary, "token", "create", "--data-dir", data, "--name", "cms-%d" % index, "--scope", "routes:publish", "--rate", "unlimited")
            tokens.append(waymark_daemon.TOKEN.search(made.stdout + made.stderr).group(1))
        start_number, _ = current()
        answers, lock, retries = [], threading.Lock(), [0]

        def put(index):
            route = {"patterns": ["/campaign/c%d" % index], "destination": "promo", "params": {"code": {"const": "CODE%04d" % index}}}
            # As a client does: a 503 (this token's share of the changes lane is taken) is
            # not acknowledged, so it is sent again after Retry-After.
            for attempt in range(50):
                status, answer, headers = call("PUT", "/v1/routes/campaign-%d" % index, route, who=tokens[index % 10])
                if status != 503:
                    break
                with lock:
                    retries[0] += 1
                time.sleep(min(float(headers.get("Retry-After", "1")), 0.2))
            with lock:
                answers.append((index, status, answer))

        marketer = {"published": [], "stale": 0, "rebased": 0}

        def publish_whole():
            # A marketer's full publish from what they fetched, refetching on 412, three times.
            for round_number in range(3):
                while True:
                    number, routes = current()
                    routes["routes"].append({"id": "marketer-%d" % round_number, "patterns": ["/m/%d" % round_number], "destination": "cart"})
                    status, answer, _ = call("POST", "/v1/revisions", {"message": "marketer", "routes": routes}, headers={"If-Match": '"rev-%d"' % number})
                    if status == 201:
                        marketer["published"].append(answer["number"])
                        marketer["rebased"] += 1 if answer.get("rebasedFrom") else 0
                        break
                    if status != 412:
                        fail("the marketer's publish: %d %s" % (status, answer))
                    marketer["stale"] += 1

        threads = [threading.Thread(target=put, args=(index,)) for index in range(50)] + [threading.Thread(target=publish_whole)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        refused = [(index, status, answer) for index, status, answer in answers if status != 201]
        if refused:
            fail("PUTs refused: %s" % refused[:5])
        end_number, routes = current()
        ids = [route["id"] for route in routes["routes"]]
        campaign = [i for i in ids if i.startswith("campaign-")]
        if sorted(campaign) != sorted("campaign-%d" % index for index in range(50)) or len(campaign) != len(set(campaign)):
            fail("the routes after the PUTs hold %d campaign routes (%d distinct)" % (len(campaign), len(set(campaign))))
        if not all("marketer-%d" % n in ids for n in range(3)):
            fail("a marketer's route was lost: %s" % [i for i in ids if i.startswith("marketer")])
        made = end_number - start_number
        if made > 50 + 3:
            fail("%d revisions for 50 PUTs and 3 publishes" % made)
        status, manifest, _ = call("GET", "/v1/manifest?platform=ios&version=5.3.0")
        served = [route["id"] for route in manifest["routes"]] if isinstance(manifest, dict) else []
        if not all("campaign-%d" % index in served for index in range(50)):
            fail("a PUT route is missing from the manifest")
        audit = [json.loads(line) for line in open(os.path.join(data, "audit.log"))]
        named = [entry["routes"][0] for entry in audit if entry.get("action") == "route.put" and entry.get("outcome") == "ok"
                 and entry["routes"][0].startswith("campaign-")]
        if sorted(named) != sorted("campaign-%d" % index for index in range(50)):
            fail("the audit log names %d PUTs (%d distinct)" % (len(named), len(set(named))))
        print("import-check: 50 concurrent PUTs from 10 tokens (%d sent again after 503) and 3 racing publishes (%d rebased over PUTs since their base, %d refetches after 412): "
              "%d revisions, every route once in the manifest and the audit log" % (retries[0], marketer["rebased"], marketer["stale"], made))

        # An invalid PUT changes nothing and names the problem.
        status, answer, _ = call("PUT", "/v1/routes/campaign-1", {"patterns": ["/campaign/c1"], "destination": "nowhere"})
        if status != 422 or "nowhere" not in json.dumps(answer) or current()[0] != end_number:
            fail("an invalid PUT: %d %s" % (status, answer))
        for bad, code in [({"id": "other", "patterns": ["/x"], "destination": "cart"}, 400), (b"[1, 2", 400), ([], 400)]:
            status, answer, _ = call("PUT", "/v1/routes/campaign-1", bad)
            if status != code or current()[0] != end_number:
                fail("PUT %r: %d %s" % (bad, status, answer))
        status, answer, _ = call("PUT", "/v1/routes/bad%20id", {"patterns": ["/x"], "destination": "cart"})
        if status != 400:
            fail("a bad id: %d" % status)
        # DELETE, the batch, and the CLI.
        status, answer, _ = call("DELETE", "/v1/routes/campaign-0")
        status2, answer2, _ = call("DELETE", "/v1/routes/campaign-0")
        if status != 201 or status2 != 404:
            fail("DELETE: %d then %d %s" % (status, status2, answer2))
        status, answer, _ = call("POST", "/v1/routes:batch", {"put": [{"id": "b%d" % i, "patterns": ["/b/%d" % i], "destination": "cart"} for i in range(200)],
                                                             "delete": ["campaign-%d" % i for i in range(1, 50)]})
        number, routes = current()
        ids = [route["id"] for route in routes["routes"]]
        if status != 201 or sum(i.startswith("b") and i[1:].isdigit() for i in ids) != 200 or any(i.startswith("campaign-") for i in ids):
            fail("the batch: %d %s" % (status, answer))
        status, answer, _ = call("POST", "/v1/routes:batch", {"put": [{"id": "b%d" % i, "patterns": ["/bb/%d" % i], "destination": "cart"} for i in range(1001)]})
        if status != 413 or current()[0] != number:
            fail("a batch past its limit: %d" % status)
        route_file = os.path.join(scratch, "route.json")
        json.dump({"patterns": ["/cli/route"], "destination": "cart"}, open(route_file, "w"))
        run(binary, "route", "put", "cli-route", route_file, "--server", server, "--token", token)
        if "cli-route" not in [r["id"] for r in current()[1]["routes"]]:
            fail("waymark route put did not add the route")
        if run(binary, "route", "delete", "cli-route", "--server", server, "--token", token).returncode != 0 or \
                "cli-route" in [r["id"] for r in current()[1]["routes"]]:
            fail("waymark route delete did not remove the route")
        missing = run(binary, "route", "delete", "cli-route", "--server", server, "--token", token, check=False)
        if missing.returncode != 1 or "no route" not in missing.stderr.lower():
            fail("deleting a missing route: exit %d %s" % (missing.returncode, missing.stderr))
        print("import-check: an invalid PUT changes nothing and names it; DELETE, a batch of 249 changes, one past the limit refused; waymark route put|delete")
    finally:
        process.terminate()
        process.wait()
    print("import-check: OK")


if __name__ == "__main__":
    main()
