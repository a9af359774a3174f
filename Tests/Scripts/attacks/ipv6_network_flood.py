from hostile_common import *  # noqa: F401,F403


def ipv6_network_flood(binary, scratch):
    """The app's token spent from 256 /64s of one /48 behind a trusted proxy: the /48 is held
    to four peers' shares, and installs in other networks are answered."""
    data = os.path.join(scratch, "ipv6-network")
    daemon = Daemon(binary, data, "--trust-forwarded-for")
    fleet = token(binary, data, "fleet6", "telemetry:write", rate=200)

    def flooder(worker):
        def where(count):
            subnet = (worker * 7919 + count) % 256
            return None, "2001:db8:77:%x::%x" % ((subnet // 16) << 8 | subnet % 16, 1 + count % 50)
        return where

    try:
        seconds, flood, phones = telemetry_flood(daemon.port, fleet, [flooder(worker) for worker in range(12)],
                                                 [(lambda index: lambda count: (None, "2001:db8:%x:1::1" % (0x100 + index)))(index)
                                                  for index in range(16)])
        alive = daemon.alive()
    finally:
        daemon.stop()
    if not alive:
        fail("the daemon died under a /48's flood")
    sent = phones["accepted"] + len(phones["refused"])
    # Four peers' shares: 40/s, a burst of 200, and the token's own first request.
    allowed = 40 * seconds + 200 + 10
    if flood["accepted"] > allowed or flood["other"] or flood["share"] == 0:
        fail("one /48 over 256 /64s: %d accepted in %.1f s (its share: 40/s, bursts of 200), %d over its share, %d over the token's rate, "
             "others %s" % (flood["accepted"], seconds, flood["share"], flood["rate"], sorted(set(flood["other"]))))
    if sent == 0 or phones["accepted"] < 0.95 * sent:
        fail("installs beside one /48 flooding their shared token: %d of %d posts accepted (%s); the /48 %d accepted"
             % (phones["accepted"], sent, sorted(set(phones["refused"])), flood["accepted"]))
    print("hostile: the fleet's telemetry token (200/s) flooded for %.1f s from 256 /64s of one /48 behind the proxy: %d accepted "
          "(its share: 40/s, bursts of 200), %d answered 429 over its share, %d over the token's rate; 16 installs in other /48s: "
          "%d of %d accepted" % (seconds, flood["accepted"], flood["share"], flood["rate"], phones["accepted"], sent))
