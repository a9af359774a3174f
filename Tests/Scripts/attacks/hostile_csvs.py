from hostile_common import *  # noqa: F401,F403

HEADER = "Short link,link,st\r\n"

# Forks the command in argv[2:], waits for it with wait4 and writes its peak RSS (KB) to argv[1];
# exits with its status.
PEAK_WRAPPER = """import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def hostile_csvs(binary, scratch):
    """Exports made to hurt the importer (`waymark import`, the file a team was sent): a
    quote never closed over 30 MB, a field of 10 MB, a row of 100,000 fields, 1,000,000 rows,
    a 70 MB file, bytes that are not UTF-8, CR, LF and CRLF mixed with quotes around line
    breaks. Each is refused at once with the row and field named, or read as RFC 4180 says,
    in bounded time and memory (the runs' peak RSS), and no document is
    written for a refused one."""
    schema = json.load(open(os.path.join(EXAMPLE, "schema-ios-5.3.0.json")))
    schema["hosts"].append("links.storefront.example")
    schema_path = os.path.join(scratch, "csv-schema.json")
    json.dump(schema, open(schema_path, "w"))
    link = "https://links.storefront.example/%s,https://storefront.example/cart,Cart\r\n"
    # Each file written in pieces as it is run, so the test's own memory (which a child's
    # peak RSS starts from) stays small.
    def pieces(*parts):
        def write(handle):
            for part, times in parts:
                for _ in range(times):
                    handle.write(part)
        return write
    head, row = HEADER.encode(), (link % "a1").encode()
    cases = [
        ("an unterminated quote over 30 MB", pieces((head + row + b'"', 1), (b"x" * 1_000_000, 30)), 1, "longer than 8192"),
        ("an unterminated quote", pieces((head + row + b'"abc,def\r\n', 1)), 1, "never closed"),
        ("a 10 MB field", pieces((head + row + b'"', 1), (b"y" * 1_000_000, 10), (b'",b\r\n', 1)), 1, "longer than"),
        ("100,000 fields in a row", pieces((head + b"," * 100_000 + b"\r\n", 1)), 1, "more than 64 fields"),
        ("1,000,000 rows", pieces((head, 1), (b"x,y\r\n" * 1000, 1000)), 1, "more than 200000 rows"),
        ("a 70 MB file", pieces((head, 1), ((b"z" * 998 + b"\r\n") * 1000, 70)), 1, "at most"),
        ("bytes that are not UTF-8", pieces((head + row + b"https://links.storefront.example/b,\xff\xfe,x\r\n", 1)), 1, "not UTF-8"),
        ("a quote inside a field", pieces((head + b'https://links.storefront.example/q"x,https://storefront.example/cart\r\n', 1)), 1, "a quote inside"),
        ("CR, LF and CRLF mixed, line breaks inside quotes",
         pieces((head + row + b'https://links.storefront.example/m2,https://storefront.example/cart,"two\r\nlines"\n'
                 + b'https://links.storefront.example/m3,https://storefront.example/cart,"a\rb"\r\n\r\n\n', 1)), 0, None),
    ]
    seen, peak = [], 0.0
    for name, make, code, says in cases:
        path = os.path.join(scratch, "hostile.csv")
        out = os.path.join(scratch, "hostile-out.json")
        if os.path.exists(out):
            os.remove(out)
        with open(path, "wb") as handle:
            make(handle)
        began = time.monotonic()
        # Through a small wrapper that forks the importer and reports its peak RSS (wait4): a
        # child's peak counts from the memory of whoever forked it, and this test's own grows
        # over the attacks before it, so the importer is forked from a fresh, small process.
        with open(os.path.join(scratch, "hostile.out"), "wb") as stdout_file, open(os.path.join(scratch, "hostile.err"), "wb") as stderr_file:
            child = subprocess.run([sys.executable, "-c", PEAK_WRAPPER, os.path.join(scratch, "hostile.peak"),
                                    binary, "import", "csv", path, "--host", "links.storefront.example", "--routes", os.path.join(EXAMPLE, "routes.json"),
                                    "--schema", schema_path, "--json", "--output", out], stdout=stdout_file, stderr=stderr_file)
        stdout, stderr = open(os.path.join(scratch, "hostile.out"), "rb").read(), open(os.path.join(scratch, "hostile.err"), "rb").read()
        took = time.monotonic() - began
        run_peak = int(open(os.path.join(scratch, "hostile.peak")).read()) / 1024
        peak = max(peak, run_peak)
        message = stderr.decode(errors="replace")
        if child.returncode != code:
            fail("%s: exit %d, expected %d: %s" % (name, child.returncode, code, message[-300:]))
        if says and says not in message:
            fail("%s: the refusal does not say %r: %s" % (name, says, message[-300:]))
        if code and os.path.exists(out):
            fail("%s: a refused import wrote a document" % name)
        if not code:
            report = json.loads(stdout)
            if report["counts"]["imported"] != 3:
                fail("%s: %s" % (name, report["counts"]))
        if took > 20:
            fail("%s took %.1f s" % (name, took))
        seen.append("%s %.2f s %.0f MB" % (name, took, run_peak))
    # The file is held whole (at most 64 MB, refused past it before it is read), with the table read from it.
    if peak > 300:
        fail("the importer's peak RSS over the hostile files: %.0f MB" % peak)
    print("hostile: hostile CSVs refused or read by RFC 4180, each naming its row and field: %s; the largest peak RSS %.0f MB"
          % ("; ".join(seen), peak))
