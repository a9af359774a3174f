/// Who a connection comes from, as the server counts peers: an IPv4 address, or the /64
/// of an IPv6 one (one subscriber's allocation). Two words, so every request can carry it.
public struct PeerAddress: Hashable, Sendable, CustomStringConvertible {
    /// `0xFFFF` and the address for IPv4; the /64 prefix and 1 for IPv6; 0 and 0 unknown.
    public let high: UInt64
    public let low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// `203.0.113.7`, `2001:db8:1:2::/64`, or `unknown`.
    public var description: String { written(asNetwork: false) }

    /// The network it is in, for counting refusals: an IPv4 address's /24
    /// (`203.0.113.0/24`), an IPv6 /64's /48 (`2001:db8:1::/48`), or `unknown`. A client
    /// spread over many addresses of one network is one line of the audit log, not one
    /// per address.
    public var network: String { written(asNetwork: true) }

    /// The address (IPv4) or /64 (IPv6), or the /24 or /48 it is in.
    private func written(asNetwork: Bool) -> String {
        if high == 0xFFFF, low <= 0xFFFF_FFFF {
            return "\(low >> 24 & 255).\(low >> 16 & 255).\(low >> 8 & 255)." + (asNetwork ? "0/24" : "\(low & 255)")
        }
        if low == 1 {
            let groups = (0..<(asNetwork ? 3 : 4)).map { String(high >> (48 - 16 * UInt64($0)) & 0xFFFF, radix: 16) }
            return groups.joined(separator: ":") + (asNetwork ? "::/48" : "::/64")
        }
        return "unknown"
    }

    /// The same network as one word, for counting per network without a string: the /24
    /// with a tag bit for IPv4, the /48 with another for IPv6, 0 unknown.
    public var networkKey: UInt64 {
        if high == 0xFFFF, low <= 0xFFFF_FFFF { return 1 << 62 | low >> 8 }
        if low == 1 { return 2 << 62 | high >> 16 }
        return 0
    }
}
