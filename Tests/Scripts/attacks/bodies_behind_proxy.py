from hostile_common import *  # noqa: F401,F403


# 35 -----------------------------------------------------------------------------------------
def bodies_behind_proxy(binary, scratch):
    """One client behind a trusted proxy holds its share of the body budget with posts
    that never finish; others behind the same proxy still post."""
    data = os.path.join(scratch, "bodies-behind-proxy")
    daemon = Daemon(binary, data, "--trust-forwarded-for")
    phone = token(binary, data, "proxied-phone", "telemetry:write", rate="unlimited")
    try:
        # 1,000,000-byte bodies until the share is full, then smaller ones to fill it to
        # within 100 bytes (less than an install's batch), each body begun and never ended.
        held = []
        for length in [1_000_000] * 80 + [100_000] * 10 + [10_000] * 10 + [1_000] * 10 + [100] * 10:
            connection = open_head(daemon.port, "127.0.0.1", (
                "POST /v1/telemetry HTTP/1.1\r\nHost: w\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
                "X-Forwarded-For: 198.51.100.7\r\nContent-Length: %d\r\n\r\n%s") % (phone, length, "[" * min(100, length - 1)))
            held.append(connection)
        # Every head is judged once the share is full to within 100 bytes (the daemon may
        # still be reading them: the figures are read once they stop moving).
        share, reserved, refused = 64 * 1024 * 1024, None, None
        for _ in range(200):
            now = (daemon.metric("waymark_http_body_bytes_reserved"), daemon.metric("waymark_http_body_budget_over_peer_share_total"))
            if now[0] is not None and now[0] > share - 100 and now == (reserved, refused):
                break
            reserved, refused = now
            time.sleep(0.05)
        accepted, refusals = installs_posting(daemon.port, phone, 4, forwarded="203.0.113.%d")
        answers = {"accepted": accepted, "refused": refusals}
        for connection in held:
            connection.close()
        given_back = None
        for _ in range(100):
            given_back = daemon.metric("waymark_http_body_bytes_reserved")
            if given_back == 0:
                break
            time.sleep(0.05)
        alive = daemon.alive()
    finally:
        daemon.stop()
    sent = answers["accepted"] + len(answers["refused"])
    if not alive:
        fail("the daemon died under one proxied client's bodies")
    if sent == 0 or answers["accepted"] < 0.95 * sent:
        fail("behind a trusted proxy, one client's unfinished posts filling its share (%s bytes reserved, %s heads refused over it) "
             "left other clients %d of %d posts accepted (refused: %s)" % (reserved, refused, answers["accepted"], sent, sorted(set(answers["refused"]))))
    if not refused or refused < 10 or reserved is None or reserved > share:
        fail("one proxied client's posts were not held to its share: %s bytes reserved, %s heads refused over the share" % (reserved, refused))
    if given_back != 0:
        fail("%s body bytes still reserved after the client left" % given_back)
    print("hostile: behind a trusted proxy one client's posts declaring 1,000,000 bytes, then smaller ones, never ended: %.1f MiB reserved "
          "(its share 64), %d heads answered 503 over it; 16 other clients the proxy names: %d of %d posts accepted; all given back when it left"
          % (reserved / 1048576, refused, answers["accepted"], sent))
