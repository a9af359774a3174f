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

/// The network a refusal is counted under: an IPv4 address's /24, an IPv6 /64's /48.
@Suite("Peer networks")
struct PeerNetworkTests {
    @Test(arguments: [
        (PeerAddress(high: 0xFFFF, low: 0x7F00_0001), "127.0.0.0/24"),
        (PeerAddress(high: 0xFFFF, low: 0xCB00_71FE), "203.0.113.0/24"),
        (PeerAddress(high: 0xFFFF, low: 0xCB00_7107), "203.0.113.0/24"),
        (PeerAddress(high: 0x2001_0DB8_0001_0002, low: 1), "2001:db8:1::/48"),
        (PeerAddress(high: 0x2001_0DB8_0001_FFFF, low: 1), "2001:db8:1::/48"),
        (PeerAddress(high: 0, low: 0), "unknown"),
        (PeerAddress(high: 7, low: 7), "unknown"),
    ])
    func network(_ peer: PeerAddress, _ text: String) {
        #expect(peer.network == text)
        #expect((peer.networkKey == 0) == (text == "unknown"), "the word and the text name the same network")
    }

    /// The word the guard and the shapes' allowance count by groups exactly as the text does.
    @Test func theNetworkKeyGroupsAsTheTextDoes() {
        let peers = (0..<512).map { PeerAddress(high: 0xFFFF, low: 0xC633_6300 + UInt64($0)) }
            + (0..<512).map { PeerAddress(high: 0x2001_0DB8_0000_0000 + UInt64($0) << 8, low: 1) } + [PeerAddress(high: 0, low: 1)]
        for a in peers.prefix(40) + peers.suffix(40) {
            for b in peers where (a.network == b.network) != (a.networkKey == b.networkKey) {
                Issue.record("\(a) and \(b): \(a.network) \(b.network), \(a.networkKey) \(b.networkKey)")
            }
        }
        #expect(PeerAddress(high: 0xFFFF, low: 0x7F00_0001).networkKey != PeerAddress(high: 0x7F00, low: 1).networkKey, "IPv4 and IPv6 apart")
    }

    @Test func addressesOfOneNetworkAreOneAndOfTwoAreTwo() {
        let one = (0..<256).map { PeerAddress(high: 0xFFFF, low: 0xC633_6400 | UInt64($0)).network }
        #expect(Set(one).count == 1)
        #expect(PeerAddress(high: 0xFFFF, low: 0xC633_6401).network != PeerAddress(high: 0xFFFF, low: 0xC633_6501).network)
    }
}
