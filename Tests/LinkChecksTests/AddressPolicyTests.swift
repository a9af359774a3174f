import LinkChecks
import Testing

@Suite("AddressPolicy: only public unicast addresses")
struct AddressPolicyTests {
    /// Address, and the refused range (nil: allowed).
    static let table: [(String, String?)] = [
        ("93.184.215.14", nil),
        ("8.8.8.8", nil),
        ("1.1.1.1", nil),
        ("0.0.0.0", "0.0.0.0/8"),
        ("0.255.1.2", "0.0.0.0/8"),
        ("10.0.0.1", "10.0.0.0/8"),
        ("10.255.255.255", "10.0.0.0/8"),
        ("100.64.0.1", "100.64.0.0/10"),
        ("100.127.255.254", "100.64.0.0/10"),
        ("100.128.0.1", nil),
        ("127.0.0.1", "127.0.0.0/8"),
        ("127.255.255.254", "127.0.0.0/8"),
        ("169.254.169.254", "169.254.0.0/16"),
        ("172.16.0.1", "172.16.0.0/12"),
        ("172.31.255.255", "172.16.0.0/12"),
        ("172.32.0.1", nil),
        ("172.15.255.255", nil),
        ("192.0.0.8", "192.0.0.0/24"),
        ("192.0.2.10", "192.0.2.0/24"),
        ("192.88.99.1", "192.88.99.0/24"),
        ("192.168.1.1", "192.168.0.0/16"),
        ("192.169.0.1", nil),
        ("198.18.0.1", "198.18.0.0/15"),
        ("198.19.255.255", "198.18.0.0/15"),
        ("198.20.0.1", nil),
        ("198.51.100.7", "198.51.100.0/24"),
        ("203.0.113.9", "203.0.113.0/24"),
        ("224.0.0.1", "224.0.0.0/4"),
        ("239.255.255.250", "224.0.0.0/4"),
        ("240.0.0.1", "240.0.0.0/4"),
        ("255.255.255.255", "240.0.0.0/4"),
        ("2606:4700:4700::1111", nil),
        ("2a00:1450:4001:80e::200e", nil),
        ("::", "::/128"),
        ("::1", "::1/128"),
        ("::ffff:127.0.0.1", "::ffff:0.0.0.0/96"),
        ("::ffff:8.8.8.8", "::ffff:0.0.0.0/96"),
        ("::127.0.0.1", "::/96"),
        ("::10.0.0.1", "::/96"),
        ("64:ff9b::7f00:1", "64:ff9b::/96"),
        ("64:ff9b:1::1", "64:ff9b:1::/48"),
        ("100::1", "100::/64"),
        ("2001::1", "2001::/32"),
        ("2001:db8::1", "2001:db8::/32"),
        ("2001:2::1", "2001::/23"),
        ("2002:7f00:1::1", "2002::/16"),
        ("3fff::1", "3fff::/20"),
        ("fc00::1", "fc00::/7"),
        ("fd12:3456::1", "fc00::/7"),
        ("fe80::1", "fe80::/10"),
        ("fec0::1", "fec0::/10"),
        ("ff02::1", "ff00::/8"),
        ("4000::1", "outside 2000::/3"),
        ("1::1", "outside 2000::/3"),
    ]

    @Test("every special-purpose range refused, public addresses allowed", arguments: table)
    func judges(_ text: String, _ range: String?) throws {
        let address = try #require(IPAddress(text), "\(text) parses")
        switch AddressPolicy.judge(address) {
        case .allowed: #expect(range == nil, "\(text) allowed, expected refused as \(range ?? "")")
        case .refused(let refused, let kind):
            #expect(refused == range, "\(text) refused as \(refused) (\(kind))")
            #expect(!kind.isEmpty)
        }
    }

    @Test func exceptionsAreExactAddressAndPort() throws {
        let allowed = try #require(SocketAddress("127.0.0.1:8443"))
        let policy = AddressPolicy(exceptions: [allowed])
        #expect(policy.judge(allowed) == .allowed)
        #expect(policy.judge(try #require(SocketAddress("127.0.0.1:8444"))) != .allowed)
        #expect(policy.judge(try #require(SocketAddress("127.0.0.2:8443"))) != .allowed)
        #expect(policy.judge(try #require(SocketAddress("[::1]:8443"))) != .allowed)
    }

    @Test(arguments: ["127.0.0.1", "127.0.0.1:0", "[127.0.0.1]:80", "::1:80", "[::1]", "host:80", "1.2.3.4:65536", ""])
    func malformedSocketAddressesAreRejected(_ text: String) {
        #expect(SocketAddress(text) == nil)
    }
}
