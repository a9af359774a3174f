import HTTPCore
import Testing

/// How a peer is written in audit lines and metrics: IPv4 dotted, IPv6 by its /64.
@Suite("Peer addresses")
struct PeerAddressTests {
    @Test(arguments: [
        (PeerAddress(high: 0xFFFF, low: 0x7F00_0001), "127.0.0.1"),
        (PeerAddress(high: 0xFFFF, low: 0xCB00_7107), "203.0.113.7"),
        (PeerAddress(high: 0xFFFF, low: 0), "0.0.0.0"),
        (PeerAddress(high: 0x2001_0DB8_0001_0002, low: 1), "2001:db8:1:2::/64"),
        (PeerAddress(high: 0, low: 1), "0:0:0:0::/64"),
        (PeerAddress(high: 0, low: 0), "unknown"),
    ])
    func described(_ peer: PeerAddress, _ text: String) {
        #expect(peer.description == text)
    }
}
