from hostile_common import *  # noqa: F401,F403


def bodies_by_network(binary, scratch):
    """Bodies a byte at a time from 5 and 50 addresses of one /24, and 1 MB bodies begun and
    never ended from 5 and 50 /64s of one /48 behind a trusted proxy: others' telemetry is
    answered, each network holds at most twice a peer's share of the body budget."""
    figures = []
    data = os.path.join(scratch, "bodies-by-network")
    daemon = Daemon(binary, data, "--max-connections", "12000", "--max-connections-per-peer", "2000")
    phone = token(binary, data, "bytes-phone", "telemetry:write", rate="unlimited")
    try:
        for addresses in (5, 50):
            held = []
            for index in range(5_000):
                held.append(open_head(daemon.port, "127.6.0.%d" % (2 + index % addresses), (
                    "POST /v1/telemetry HTTP/1.1\r\nHost: w\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n1\r\n[\r\n") % phone))
            reserved = settled(daemon, "waymark_http_body_bytes_reserved")
            accepted, refused = installs_posting(daemon.port, phone, 4)
            for connection in held:
                connection.close()
            sent = accepted + len(refused)
            if sent == 0 or accepted < 0.95 * sent:
                fail("5,000 one-byte bodies from %d addresses of one /24 (%s bytes reserved) left installs %d of %d posts (refused: %s)"
                     % (addresses, reserved, accepted, sent, sorted(set(refused))))
            if reserved is None or reserved > 5_000 * 4_096:
                fail("5,000 one-byte bodies reserved %s bytes, more than a 4 KiB step each" % reserved)
            figures.append("%d addresses of one /24, 5,000 one-byte bodies: %.1f MiB reserved, installs %d of %d" % (addresses, reserved / 1048576, accepted, sent))
        if not daemon.alive():
            fail("the daemon died under one-byte bodies")
    finally:
        daemon.stop()
    data = os.path.join(scratch, "bodies-by-network-proxy")
    daemon = Daemon(binary, data, "--trust-forwarded-for", "--max-connections", "4000", "--max-connections-per-peer", "2000")
    phone = token(binary, data, "proxied-bytes-phone", "telemetry:write", rate="unlimited")
    try:
        for clients in (5, 50):
            held = []
            for index in range(400):
                held.append(open_head(daemon.port, "127.9.0.%d" % (2 + index % 20), (
                    "POST /v1/telemetry HTTP/1.1\r\nHost: w\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
                    "X-Forwarded-For: 2001:db8:6:%x::7\r\nContent-Length: 1000000\r\n\r\n[[[[") % (phone, index % clients)))
            reserved = settled(daemon, "waymark_http_body_bytes_reserved")
            accepted, refused = installs_posting(daemon.port, phone, 4, forwarded="203.0.113.%d")
            for connection in held:
                connection.close()
            sent = accepted + len(refused)
            if sent == 0 or accepted < 0.95 * sent:
                fail("1 MB bodies from %d /64s of one /48 (%s bytes reserved) left installs %d of %d posts (refused: %s)"
                     % (clients, reserved, accepted, sent, sorted(set(refused))))
            if reserved is None or reserved > 128 * 1048576:
                fail("%d /64s of one /48 hold %s bytes, more than the network's 128 MiB" % (clients, reserved))
            figures.append("%d /64s of one /48 behind a proxy, 400 bodies of 1 MB begun: %.1f MiB reserved (the network's share 128), installs %d of %d"
                           % (clients, reserved / 1048576, accepted, sent))
    finally:
        daemon.stop()
    print("hostile: bodies by network: " + "; ".join(figures))
