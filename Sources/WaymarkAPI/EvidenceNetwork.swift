#if canImport(Glibc)
import Glibc
#endif
import HTTPCore

/// The network a request comes from, as the rollout guard caps evidence: its peer's
/// `PeerAddress.networkKey` (an IPv4 /24 or an IPv6 /48, the same networks the refusal audit
/// counts by; 0: unknown, an in-process request).
///
/// Behind a reverse proxy every peer is the proxy; with `trustForwardedFor` a request whose
/// peer is on loopback is taken to come from the last address in its `X-Forwarded-For`
/// (the one the proxy added: `proxy_add_x_forwarded_for`), and from the proxy itself when
/// that field is missing or not an address.
enum EvidenceNetwork {
    static func of(_ head: HTTPRequestHead, trustForwardedFor: Bool) -> UInt64 {
        peer(of: head, trustForwardedFor: trustForwardedFor)?.networkKey ?? 0
    }

    /// The client a request comes from as a peer (an IPv4 address, an IPv6 /64): the
    /// connection's, or behind a trusted proxy on loopback the address it forwards. Nil in process.
    static func peer(of head: HTTPRequestHead, trustForwardedFor: Bool) -> PeerAddress? {
        guard let peer = head.peer else { return nil }
        if trustForwardedFor, isLoopback(peer), let forwarded = head.headers["X-Forwarded-For"],
           let last = forwarded.split(separator: ",").last.map({ $0.trimmingCharacters(in: .whitespaces) }),
           let address = parse(last) {
            return address
        }
        return peer
    }

    static func isLoopback(_ peer: PeerAddress) -> Bool {
        (peer.high == 0xFFFF && peer.low >> 24 == 127) || (peer.high == 0 && peer.low == 1)
    }

    /// An IPv4 or IPv6 address as `PeerAddress` counts it (IPv6: its /64; an IPv4-mapped
    /// one, `::ffff:203.0.113.7` as a dual-stack proxy writes it, its IPv4 address), with a
    /// port (`203.0.113.7:5000`, `[2001:db8::1]:5000`) or brackets stripped.
    static func parse(_ written: String) -> PeerAddress? {
        var text = Substring(written)
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            text = text[text.index(after: text.startIndex)..<close]
        } else if text.contains("."), let colon = text.firstIndex(of: ":"), text.firstIndex(of: ":") == text.lastIndex(of: ":") {
            text = text[..<colon]
        }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(text), &v4) == 1 {
            return PeerAddress(high: 0xFFFF, low: UInt64(UInt32(bigEndian: v4.s_addr)))
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, String(text), &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes.prefix(10).allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return PeerAddress(high: 0xFFFF, low: bytes.suffix(4).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        }
        return PeerAddress(high: bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }, low: 1)
    }
}
