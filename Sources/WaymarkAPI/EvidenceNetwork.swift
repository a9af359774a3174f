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

    /// An IPv4 or IPv6 address as `PeerAddress` counts it (IPv6: its /64).
    static func parse(_ text: String) -> PeerAddress? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return PeerAddress(high: 0xFFFF, low: UInt64(UInt32(bigEndian: v4.s_addr)))
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let high = withUnsafeBytes(of: &v6) { bytes in bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        return PeerAddress(high: high, low: 1)
    }
}
