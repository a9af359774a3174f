import HTTPCore
import HTTPServer

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
    /// connection's, or behind a trusted proxy on loopback the address it forwards
    /// (`HTTPRequestHead.client`, as the server's body shares count it). Nil in process.
    static func peer(of head: HTTPRequestHead, trustForwardedFor: Bool) -> PeerAddress? {
        head.client(trustingForwardedFor: trustForwardedFor)
    }

    static func parse(_ written: String) -> PeerAddress? { PeerAddress(written: written) }
}
