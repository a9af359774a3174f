#!/usr/bin/env python3
"""A Google Takeout export of Firebase Dynamic Links for the storefront example, made from the
documented columns: one CSV per domain with the short link, the deep link (`link`), apn, afl,
amv, ibi, ifl, ius, ipfl, ipbi, isi, imv, efr, ofl, st, sd, si, utm_*, at, ct, mt, pt,
archived, link name and creation time.

Every row says what `waymark import firebase --host links.storefront.example` must make of it
against the storefront's routes (`expected`: imported, or the reason it is not): deep links
every route shape answers (literal, capture, query param, custom scheme, a route one build
lacks, a destination behind a precondition), links no route answers, page.link ones,
archived, duplicates (some differing only in case), and hostile values in every column
(quotes, commas and line breaks in fields, controls and bidi overrides, scripts, private and
non-https addresses, long fields, paths that are not literal text).

Usage: takeout-fixture.py OUT.csv EXPECTED.json [--pad-to MB]
  --pad-to MB: archived rows of long fields after the links until the file is MB megabytes
  (the links and their expectations are the same).
"""
import csv
import json
import random
import sys

HOST = "links.storefront.example"
COLUMNS = ["Short link", "link", "apn", "afl", "amv", "ibi", "ifl", "ius", "ipfl", "ipbi", "isi", "imv", "efr", "ofl",
           "st", "sd", "si", "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content",
           "at", "ct", "mt", "pt", "archived", "Link name", "Created"]
APP = {"apn": "example.storefront", "ibi": "example.storefront", "isi": "6450000000", "ius": "storefront"}


def rows(seed=52):
    rng = random.Random(seed)
    out = []
    used = set()

    def code():
        while True:
            text = "".join(rng.choice("abcdefghijkmnpqrstuvwxyz23456789") for _ in range(rng.randint(4, 7)))
            # Not the path of a route the storefront has already (/cart, /new, …).
            if text.lower() not in used and text.lower() not in ("cart", "new", "orders", "search", "settings"):
                used.add(text.lower())
                return text

    def row(path, deep, expected, host=HOST, **columns):
        values = dict(APP)
        values.update({"Short link": "https://%s/%s" % (host, path) if path is not None else "", "link": deep,
                       "archived": "false", "Created": "2024-%02d-%02dT10:00:00Z" % (rng.randint(1, 12), rng.randint(1, 28))})
        values.update(columns)
        out.append(({name: values.get(name, "") for name in COLUMNS}, expected))

    def answered():
        kind = rng.randrange(9)
        number = rng.randint(1, 99999999)
        if kind == 0:
            return "https://storefront.example/product/p%d" % number
        if kind == 1:
            return "https://www.storefront.example/p/p%d" % number
        if kind == 2:
            return "storefront://product/p%d" % number
        if kind == 3:
            return "https://storefront.example/c/%s" % rng.choice(["shoes", "bags", "hats-2026", "sale"])
        if kind == 4:
            return "https://storefront.example/search?q=%s" % rng.choice(["red", "blue%20shoes", "hat", "size-9"])
        if kind == 5:
            return "https://storefront.example/orders/%d" % rng.randint(1, 1000000)  # behind auth
        if kind == 6:
            return "https://storefront.example/new"  # 5.3.0 and Android only
        if kind == 7:
            return "https://storefront.example/%s" % rng.choice(["cart", "orders", "settings", ""])
        return "https://storefront.example/category/%s" % rng.choice(["kids", "men", "women"])

    # 1. Links every route shape answers, with the other columns filled as teams filled them.
    for index in range(330):
        columns = {"utm_source": rng.choice(["", "newsletter", "qr"]), "utm_medium": rng.choice(["", "email", "print"]),
                   "utm_campaign": rng.choice(["", "spring-26", "box_insert"]), "Link name": "Link %d" % index}
        if rng.random() < 0.4:
            columns.update({"st": "Storefront pick %d" % index, "sd": "Something worth a look, with a comma, and \"quotes\".",
                            "si": "https://cdn.storefront.example/img/%d.png" % index})
        if rng.random() < 0.3:
            same = "https://storefront.example/help/%d" % index
            columns.update({"ofl": same, "ifl": same, "afl": same})
        elif rng.random() < 0.3:
            columns.update({"ofl": "https://storefront.example/desktop", "afl": "https://storefront.example/android"})
        if rng.random() < 0.2:
            columns.update({"imv": "5.2", "amv": "52", "efr": "1", "at": "1001", "ct": "box", "mt": "8", "pt": "123456"})
        row(code(), answered(), "imported", **columns)
    # 2. Deep links no route answers.
    for index in range(60):
        row(code(), rng.choice(["https://storefront.example/blog/post-%d" % index, "https://storefront.example/u/someone%d/likes" % index,
                                "https://storefront.example/product/NOT-AN-ID-%d" % index, "https://elsewhere.example/x/%d" % index,
                                "https://storefront.example/sale/spring"]), "unanswered")
    # 3. Google's domains, which cannot move.
    for index in range(40):
        row(code(), answered(), "cannotMove", host=rng.choice(["storefront.page.link", "storefrontapp.page.link"]))
    # 4. Archived.
    for index in range(40):
        row(code(), answered(), "archived", archived=rng.choice(["true", "TRUE", "yes"]))
    # 5. Another domain of the export.
    for index in range(10):
        row(code(), answered(), "otherHost", host="go.storefront.example")
    # 6. Duplicates of earlier links with their deep links: the same path, or the same
    # without case (one pattern here). Then pairs differing only in case with different deep
    # links (two links in Firebase): neither is imported, or one would open the other's.
    imported = [r for r, e in out if e == "imported" and r["Short link"].startswith("https://" + HOST + "/")]
    for index in range(30):
        earlier = rng.choice(imported)
        path = earlier["Short link"].rsplit("/", 1)[1]
        row(path.upper() if index % 2 else path, earlier["link"], "duplicate")
    for index in range(5):
        path = code()
        row(path, answered(), "caseCollision")
        row(path.upper(), "https://storefront.example/orders/%d" % (index + 1), "caseCollision")
    # 7. Hostile values in every column.
    cases = [
        ("imported", {"st": "two\r\nlines", "sd": "fine"}),
        ("imported", {"st": "right\u202eto left"}),
        ("imported", {"sd": "\x00\x07\x1b[31m"}),
        ("imported", {"si": "http://cdn.storefront.example/x.png"}),
        ("imported", {"si": "https://127.0.0.1/x.png"}),
        ("imported", {"si": "javascript:alert(1)"}),
        ("imported", {"st": "x" * 7000}),
        ("imported", {"st": "<script>alert(1)</script>", "sd": "\"><img src=x onerror=alert(1)>"}),
        ("imported", {"ofl": "javascript:alert(1)", "ifl": "javascript:alert(1)", "afl": "javascript:alert(1)"}),
        ("imported", {"ofl": "https://10.0.0.1/", "ifl": "https://10.0.0.1/", "afl": "https://10.0.0.1/"}),
        ("imported", {"ofl": "https://user@storefront.example/", "ifl": "https://user@storefront.example/", "afl": "https://user@storefront.example/"}),
        ("imported", {"Link name": "name\r\nwith\u2028breaks\u202e", "Created": "\x7f" * 50, "utm_campaign": "<script>", "ct": "\"quoted, twice\""}),
        ("imported", {"amv": "99999999999999999999", "imv": "-1", "efr": "maybe", "apn": "x" * 8000}),
        ("imported", {"st": "He said \"hi\", twice", "sd": "caf\u00e9 \U0001F375"}),
    ]
    for expected, columns in cases:
        row(code(), answered(), expected, **columns)
    for path in ["a%20b", "<script>", "a\"b", "x/../y", "a b", "q?x=1", "f#frag", "caf\u00e9", "", "./", "%2e%2e", "a\r\nb", "x" * 1100]:
        row(path, answered(), "badShortLink")
    row(None, answered(), "badShortLink")
    row(code(), "", "badDeepLink")
    row(code(), "https://storefront.example/" + "a" * 3000, "badDeepLink")
    row(code(), "https://storefront.example/search?q=a b", "badDeepLink")
    row(code(), "https://storefront.example/\u202e", "badDeepLink")
    row(code(), "javascript:alert(1)", "unanswered")
    return out


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    pad = float(sys.argv[sys.argv.index("--pad-to") + 1]) * 1e6 if "--pad-to" in sys.argv else 0
    made = rows()
    with open(sys.argv[1], "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(COLUMNS)
        for values, _ in made:
            writer.writerow([values[name] for name in COLUMNS])
        index = 0
        assert len(COLUMNS) == 29
        while pad and out.tell() < pad:
            writer.writerow(["https://%s/old%d" % (HOST, index), "https://storefront.example/product/p%d" % index] + [""] * 12
                            + ["Old campaign %d" % index, "d" * 2000] + [""] * 10 + ["true", "old", "2020-01-01T00:00:00Z"])
            index += 1
    expected = [{"row": number + 2, "shortLink": values["Short link"], "link": values["link"], "expected": outcome,
                 "utm_campaign": values["utm_campaign"]}
                for number, (values, outcome) in enumerate(made)]
    with open(sys.argv[2], "w") as out:
        json.dump(expected, out, indent=1)


if __name__ == "__main__":
    main()
