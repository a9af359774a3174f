from hostile_common import *  # noqa: F401,F403


def shared_token_flood(binary, scratch):
    """The app's telemetry token spent as fast as they can by one address, then by 48: each
    address gets its share of the token's rate, and while the token runs low only quiet
    addresses are served, so installs posting now and then are answered."""
    data = os.path.join(scratch, "shared-token")
    daemon = Daemon(binary, data)
    fleet = token(binary, data, "fleet", "telemetry:write", rate=200)

    def at(address):
        return lambda count: (address, None)

    def phase(flooders, connections_each):
        seconds, flood, installs = telemetry_flood(daemon.port, fleet, [at(address) for address in flooders for _ in range(connections_each)],
                                                   [at("127.0.0.%d" % (2 + index)) for index in range(16)])
        sent = installs["accepted"] + len(installs["refused"])
        if sent == 0 or installs["accepted"] < 0.95 * sent:
            fail("installs beside %d addresses flooding their shared token: %d of %d posts accepted (%s); the flooders %d accepted, "
                 "%d over their share, %d over the token's rate" % (len(flooders), installs["accepted"], sent, sorted(set(installs["refused"])),
                                                                    flood["accepted"], flood["share"], flood["rate"]))
        if flood["other"] or flood["share"] == 0:
            fail("%d flooding addresses: %d accepted, %d over their share, others %s"
                 % (len(flooders), flood["accepted"], flood["share"], sorted(set(flood["other"]))))
        return seconds, flood, installs["accepted"], sent

    seconds, one, accepted_one, sent_one = phase(["127.0.0.1"], 4)
    if one["accepted"] > 10 * seconds + 50 + 10:
        fail("one flooding address got %d through in %.1f s (its share: 10/s, bursts of 50)" % (one["accepted"], seconds))
    _, many, accepted_many, sent_many = phase(["127.0.0.%d" % (20 + index) for index in range(48)], 1)
    refused = daemon.metric('waymark_rate_limited_over_peer_share_total{token="fleet",scope="telemetry:write"}')
    alive = daemon.alive()
    daemon.stop()
    if not alive:
        fail("the daemon died under the shared token's flood")
    if not refused or refused < one["share"] + many["share"]:
        fail("/metrics counts %s refusals over the peer share, the flooders saw %d" % (refused, one["share"] + many["share"]))
    print("hostile: the fleet's telemetry token (200/s) flooded for 6 s by one address on 4 connections: %d accepted (its share: "
          "10/s, bursts of 50), %d answered 429 over its share; by 48 addresses: %d accepted, %d 429 (busy while the token ran low), "
          "%d over the token's rate; 16 installs at other addresses posting every 2 s: %d of %d, then %d of %d accepted"
          % (one["accepted"], one["share"], many["accepted"], many["share"], many["rate"], accepted_one, sent_one, accepted_many, sent_many))
