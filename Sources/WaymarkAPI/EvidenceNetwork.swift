import HTTPCore
import HTTPServer

/// The network a request comes from, as the rollout guard caps evidence: its peer's
/// `PeerAddress.networkKey` (an IPv4 /24 or an IPv6 /48, the same networks the refusal audit
/// counts by; 0: unknown, an in-process request).
///
/// Behind a trusted proxy on loopback, the client it names (`HTTPRequestHead.client`, the
/// rule every share by peer uses).
enum EvidenceNetwork {
    static func of(_ head: HTTPRequestHead, trustForwardedFor: Bool) -> UInt64 {
        head.client(trustingForwardedFor: trustForwardedFor)?.networkKey ?? 0
    }
}
