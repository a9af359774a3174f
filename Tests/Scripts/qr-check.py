#!/usr/bin/env python3
"""QR codes from a live daemon, read back by a real decoder (zbarimg, Debian's zbar-tools).

  1. For every error-correction level and every version up to 40, a link exactly as long
     as the version holds (X-QR-Capacity): GET /v1/qr answers that version (X-QR-Version),
     one byte more the next version (past 40: 422 tooLong), and zbarimg reads each PNG
     back as the link. Each level starts at the version the shortest link on the
     example's host needs (2 to 4): version 1 holds 7 to 17 bytes, less than any https
     link there.
  2. The SVG, rasterised by rsvg-convert (librsvg), decodes too, for each level at four
     lengths up to version 40; so does `waymark qr URL --output F`.
  3. Damage: a 4 x 4 square of modules inverted (two or three codewords, within every
     level's budget) still decodes at each level for versions 4, 7, 20 and 40; half the
     symbol inverted does not (the check can fail).
  4. Refusals: a host the schemas do not declare (422), http, user information, no url,
     a bad level, too long for the level (422 tooLong), a PNG too wide (400); HEAD is GET
     without a body.

Usage: qr-check.py WAYMARK_BINARY
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import zlib

sys.path.insert(0, os.path.dirname(__file__))
import waymark_daemon  # noqa: E402

LEVELS = "LMQH"
SCALE = 3


def fail(message):
    print("qr-check: FAIL: " + message)
    sys.exit(1)


def link_of(length, seed):
    """An https link on the example's host, exactly `length` bytes, only unreserved characters."""
    prefix = "https://storefront.example/"
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-"
    body = "".join(alphabet[(seed * 31 + i * 7) % len(alphabet)] for i in range(length - len(prefix)))
    return prefix + body


def read_png(data):
    """Our PNGs: 1-bit greyscale (1 white), filter 0 on every row. Returns (width, height,
    rows), each row a pixel a byte (0 or 255), as write_png takes them."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, idat, width, height = 8, b"", 0, 0
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        chunk = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
            assert depth == 1 and colour == 0, "not 1-bit greyscale"
        elif kind == b"IDAT":
            idat += chunk
        offset += 12 + length
    raw = zlib.decompress(idat)
    stride = (width + 7) // 8 + 1
    assert len(raw) == stride * height and all(raw[y * stride] == 0 for y in range(height))
    rows = [bytearray(255 if raw[y * stride + 1 + x // 8] & (0x80 >> (x % 8)) else 0 for x in range(width)) for y in range(height)]
    return width, height, rows


def write_png(path, width, height, rows):
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + bytes(row) for row in rows)
    with open(path, "wb") as out:
        out.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
                  + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def decode(paths):
    """zbarimg's reading of each file, in order (None where it found no code)."""
    results = []
    for path in paths:
        run = subprocess.run(["zbarimg", "--raw", "-q", "-Sdisable", "-Sqrcode.enable", path], capture_output=True)
        results.append(run.stdout.decode("utf-8", "replace").rstrip("\n") if run.returncode == 0 else None)
    return results


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    binary = os.path.abspath(sys.argv[1])
    for tool in ("zbarimg", "rsvg-convert"):
        if shutil.which(tool) is None:
            fail("%s is not installed (make test-qr installs it)" % tool)
    scratch = tempfile.mkdtemp(prefix="waymark-qr-")
    process, token, port = waymark_daemon.start(binary, os.path.join(scratch, "data"))
    started = time.time()
    try:
        if not port or not token:
            fail("the daemon did not start")

        def qr(link, level="M", fmt="png", scale=SCALE, method="GET"):
            query = urllib.parse.urlencode({"url": link, "ecc": level, "format": fmt, "scale": str(scale)})
            return waymark_daemon.call(port, token, method, "/v1/qr?" + query)

        # 1. Every version and level, the link filling it exactly.
        decoded = 0
        for level in LEVELS:
            paths, links = [], []
            # The shortest link on the host (27 bytes) already needs version 2 or 3: version 1
            # holds 7 to 17 bytes, so no https link of the example reaches it.
            length = len(link_of(27, 0))
            first = int(qr(link_of(length, 0), level)[2]["X-QR-Version"])
            for version in range(first, 41):
                # The link that fills this version: as long as the capacity it reports, which
                # must still be this version, while one byte more must be the next.
                status, body, headers = qr(link_of(length, version), level)
                if status != 200 or int(headers["X-QR-Version"]) != version:
                    fail("level %s: a %d-byte link got %d %s, not version %d" % (level, length, status, headers.get("X-QR-Version"), version))
                length = int(headers["X-QR-Capacity"])
                status, body, headers = qr(link_of(length, version), level)
                if status != 200 or int(headers["X-QR-Version"]) != version:
                    fail("level %s: the %d bytes version %d says it holds got version %s" % (level, length, version, headers.get("X-QR-Version")))
                path = os.path.join(scratch, "%s-%02d.png" % (level, version))
                with open(path, "wb") as out:
                    out.write(body)
                width = read_png(body)[0]
                if width != (version * 4 + 17 + 8) * SCALE:
                    fail("level %s version %d: the PNG is %d pixels wide" % (level, version, width))
                paths.append(path)
                links.append(link_of(length, version))
                length += 1
            # Past version 40 there is nothing: too long.
            status, body, _ = qr(link_of(length, 41), level)
            if status != 422 or b"tooLong" not in body:
                fail("level %s: %d bytes (past version 40) answered %d %r" % (level, length, status, body[:200]))
            for version, (got, want) in enumerate(zip(decode(paths), links), first):
                if got != want:
                    fail("level %s version %d (%d bytes): zbarimg read %r" % (level, version, len(want), (got or "")[:80]))
                decoded += 1
            print("qr-check: level %s: versions %d-40 each at their full length (%d to %d bytes), all decoded by zbarimg"
                  % (level, first, len(links[0]), len(links[-1])))

        # 2. SVG through librsvg, and the CLI.
        svgs = []
        for level in LEVELS:
            for version, length in ((3, 28), (10, 150), (25, 500), (40, 1200)):
                link = link_of(length, version + 100)
                status, body, headers = qr(link, level, fmt="svg", scale=4)
                if status != 200 or headers["Content-Type"] != "image/svg+xml" or not body.startswith(b"<svg"):
                    fail("the SVG answered %d %s" % (status, headers.get("Content-Type")))
                svg, png = os.path.join(scratch, "s-%s-%d.svg" % (level, version)), os.path.join(scratch, "s-%s-%d.png" % (level, version))
                with open(svg, "wb") as out:
                    out.write(body)
                subprocess.run(["rsvg-convert", "-o", png, svg], check=True)
                svgs.append((png, link))
        cli_svg, cli_png = os.path.join(scratch, "cli.svg"), os.path.join(scratch, "cli.png")
        cli_link = "https://www.storefront.example/sale/spring?utm_source=poster&code=A+B%20C"
        run = subprocess.run([binary, "qr", cli_link, "--server", "http://127.0.0.1:%d" % port, "--token", token, "--ecc", "Q",
                              "--output", cli_svg], capture_output=True, text=True)
        if run.returncode != 0:
            fail("waymark qr exited %d: %s" % (run.returncode, run.stderr))
        subprocess.run(["rsvg-convert", "-o", cli_png, cli_svg], check=True)
        svgs.append((cli_png, cli_link))
        for (path, link), got in zip(svgs, decode([path for path, _ in svgs])):
            if got != link:
                fail("%s: zbarimg read %r, not %r" % (os.path.basename(path), got, link))
        print("qr-check: %d SVGs (4 levels x four lengths up to version 40, and waymark qr's own) rasterised by rsvg-convert and decoded" % len(svgs))

        # 3. Damage within the budget decodes; half the symbol does not.
        damaged, ruined = [], []
        for level in LEVELS:
            for version in (4, 7, 20, 40):
                with open(os.path.join(scratch, "%s-%02d.png" % (level, version)), "rb") as source:
                    width, height, rows = read_png(source.read())
                size = version * 4 + 17

                def invert(x0, y0, x1, y1, target):
                    for my in range(y0, y1):
                        for mx in range(x0, x1):
                            for py in range((my + 4) * SCALE, (my + 5) * SCALE):
                                for px in range((mx + 4) * SCALE, (mx + 5) * SCALE):
                                    target[py][px] = 255 - target[py][px]

                hurt = [bytearray(row) for row in rows]
                invert(size - 4, size - 4, size, size, hurt)  # 16 modules: the first codewords' corner
                path = os.path.join(scratch, "d-%s-%02d.png" % (level, version))
                write_png(path, width, height, hurt)
                damaged.append(path)
                broken = [bytearray(row) for row in rows]
                invert(0, size // 2, size, size, broken)
                path = os.path.join(scratch, "r-%s-%02d.png" % (level, version))
                write_png(path, width, height, broken)
                ruined.append(path)
        originals = {}
        for level in LEVELS:
            for version in (4, 7, 20, 40):
                originals[(level, version)] = decode([os.path.join(scratch, "%s-%02d.png" % (level, version))])[0]
        for path, got in zip(damaged, decode(damaged)):
            level, version = os.path.basename(path)[2], int(os.path.basename(path)[4:6])
            if got != originals[(level, version)]:
                fail("level %s version %d with 16 modules inverted: zbarimg read %r" % (level, version, (got or "")[:60]))
        readable = [path for path, got in zip(ruined, decode(ruined)) if got is not None]
        if readable:
            fail("symbols with half their modules inverted still decoded: %s" % readable[:3])
        print("qr-check: 16 inverted modules decoded at every level (versions 4, 7, 20, 40); half the symbol inverted never did")

        # 4. Refusals, and HEAD.
        for link, status, code in (("https://evil.example/sale", 422, b"undeclaredHost"), ("http://storefront.example/sale", 400, b"badURL"),
                                   ("https://user@storefront.example/sale", 400, b"badURL"), ("not a link", 400, b"badURL")):
            got, body, _ = qr(link)
            if got != status or code not in body:
                fail("%r answered %d %r" % (link, got, body[:200]))
        for path, code in (("/v1/qr", b"missingURL"), ("/v1/qr?url=https://storefront.example/&ecc=X", b"badLevel"),
                           ("/v1/qr?url=https://storefront.example/&format=gif", b"badFormat"),
                           ("/v1/qr?url=https://storefront.example/&format=png&scale=33", b"badScale")):
            got, body, _ = waymark_daemon.call(port, token, "GET", path)
            if got != 400 or code not in body:
                fail("%s answered %d %r" % (path, got, body[:200]))
        got, body, _ = qr(link_of(2900, 1), "L", scale=20)
        if got != 400 or b"badScale" not in body:
            fail("a 3,700-pixel PNG answered %d %r" % (got, body[:200]))
        got, body, headers = qr("https://storefront.example/p/42", method="HEAD")
        if got != 200 or body or headers.get("Content-Type") != "image/png":
            fail("HEAD answered %d with %d bytes" % (got, len(body)))
        got, _, _ = waymark_daemon.call(port, None, "GET", "/v1/qr?url=https://storefront.example/")
        if got != 401:
            fail("without a token /v1/qr answered %d" % got)
        print("qr-check: %d codes decoded in all; refusals and HEAD as documented; %.0f s" % (decoded + len(svgs) + len(damaged), time.time() - started))
    finally:
        process.terminate()
        process.wait()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
