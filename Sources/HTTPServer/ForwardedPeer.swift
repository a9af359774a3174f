#if canImport(Glibc)
import Glibc
#endif
import HTTPCore

/// The client a request comes from, as the server and Waymark count peers (an IPv4
/// address, an IPv6 /64).
///
/// Behind a reverse proxy every connection is the proxy's. With `trustForwardedFor` a
/// request whose connection comes from loopback is taken to come from the last address in
/// its `X-Forwarded-For` — the last element of the last field line, the one the proxy added
/// (nginx's `proxy_add_x_forwarded_for` rewrites the field; a proxy that adds a line of its
/// own adds it last) — and from the proxy itself when that field is missing or not an
/// address. A connection from any other address is its own peer whatever it writes there:
/// only a proxy on the same host is believed.
extension HTTPRequestHead {
    public func client(trustingForwardedFor trust: Bool) -> PeerAddress? {
        guard let peer else { return nil }
        guard trust, peer.isLoopback,
              let last = headers.lastElement(of: "X-Forwarded-For", maximumLength: PeerAddress.longestWritten),
              let address = PeerAddress(written: last)
        else { return peer }
        return address
    }
}

extension PeerAddress {
    /// 127.0.0.0/8 or ::1.
    public var isLoopback: Bool {
        (high == 0xFFFF && low >> 24 == 127) || (high == 0 && low == 1)
    }

    /// The longest address `init(written:)` reads: an IPv6 address with an IPv4 tail in
    /// brackets and a port, `[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:65535`.
    public static let longestWritten = 53

    /// An IPv4 or IPv6 address as `PeerAddress` counts it (IPv6: its /64; an IPv4-mapped
    /// one, `::ffff:203.0.113.7` as a dual-stack proxy writes it, its IPv4 address), with a
    /// port (`203.0.113.7:5000`, `[2001:db8::1]:5000`) or brackets stripped; nil for
    /// anything else.
    public init?(written: String) {
        var text = Substring(written)
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            text = text[text.index(after: text.startIndex)..<close]
        } else if text.contains("."), let colon = text.firstIndex(of: ":"), text.firstIndex(of: ":") == text.lastIndex(of: ":") {
            text = text[..<colon]
        }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(text), &v4) == 1 {
            self.init(high: 0xFFFF, low: UInt64(UInt32(bigEndian: v4.s_addr)))
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, String(text), &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes.prefix(10).allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            self.init(high: 0xFFFF, low: bytes.suffix(4).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            return
        }
        self.init(high: bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, low: 1)
    }
}
