import Glibc

/// An IPv4 (4 bytes) or IPv6 (16 bytes) address, in network order.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// The standard text forms only (`inet_pton`): `192.0.2.1`, `2001:db8::1`. Not `127.1`
    /// or `0x7f000001`: those spellings are for URLs, which curl turns into addresses.
    public init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
    }

    public var isIPv4: Bool { bytes.count == 4 }

    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        bytes.withUnsafeBytes { raw in
            _ = inet_ntop(isIPv4 ? AF_INET : AF_INET6, raw.baseAddress, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// True when the first `length` bits equal `prefix`'s.
    func hasPrefix(_ prefix: [UInt8], length: Int) -> Bool {
        guard prefix.count == bytes.count else { return false }
        var bits = length
        for index in bytes.indices where bits > 0 {
            let mask: UInt8 = bits >= 8 ? 0xFF : ~(0xFF >> UInt8(bits))
            guard bytes[index] & mask == prefix[index] & mask else { return false }
            bits -= 8
        }
        return true
    }
}

/// Where a connection goes: an address and a TCP port.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    public var ip: IPAddress
    public var port: UInt16

    public init(ip: IPAddress, port: UInt16) {
        self.ip = ip
        self.port = port
    }

    /// `127.0.0.1:8443` or `[::1]:8443`.
    public init?(_ text: String) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let ip = IPAddress(String(host)), ip.isIPv4 != text.hasPrefix("["),
              let port = UInt16(portText), port > 0 else { return nil }
        self.init(ip: ip, port: port)
    }

    public var description: String { ip.isIPv4 ? "\(ip):\(port)" : "[\(ip)]:\(port)" }
}

/// Whether an outbound check may connect to an address. Only public unicast addresses are
/// allowed: every range of the IANA IPv4 and IPv6 special-purpose registries that is not
/// globally reachable, plus multicast and the reserved space, is refused; of IPv6 only
/// global unicast (2000::/3) is considered at all, so IPv4-mapped, IPv4-compatible and
/// NAT64 forms, unique-local and link-local addresses are refused whatever they embed.
///
/// The decision is made on the address a connection is about to use, never on a URL's
/// spelling, so `127.1`, `0x7f000001`, a DNS name resolving to 10.0.0.1 and a redirect
/// to one are all judged the same way.
public struct AddressPolicy: Hashable, Sendable {
    /// Exact address and port pairs allowed despite the rules. For tests against servers
    /// on loopback, and nothing else: production leaves it empty.
    public var exceptions: Set<SocketAddress>

    public init(exceptions: Set<SocketAddress> = []) {
        self.exceptions = exceptions
    }

    public enum Verdict: Hashable, Sendable {
        case allowed
        /// The range's notation and what it is: `("10.0.0.0/8", "a private network")`.
        case refused(range: String, kind: String)
    }

    public func judge(_ address: SocketAddress) -> Verdict {
        if exceptions.contains(address) { return .allowed }
        return Self.judge(address.ip)
    }

    public static func judge(_ ip: IPAddress) -> Verdict {
        let table = ip.isIPv4 ? ipv4 : ipv6
        if let range = table.first(where: { ip.hasPrefix($0.prefix.bytes, length: $0.length) }) {
            return .refused(range: range.notation, kind: range.kind)
        }
        if !ip.isIPv4, !ip.hasPrefix(globalUnicast.bytes, length: 3) {
            return .refused(range: "outside 2000::/3", kind: "not an IPv6 global unicast address")
        }
        return .allowed
    }

    struct Range {
        let prefix: IPAddress
        let length: Int
        let kind: String
        var notation: String { "\(prefix)/\(length)" }

        init(_ notation: String, _ kind: String) {
            let parts = notation.split(separator: "/")
            prefix = IPAddress(String(parts[0]))!
            length = Int(parts[1])!
            self.kind = kind
        }
    }

    private static let globalUnicast = IPAddress("2000::")!

    /// RFC 6890 and the IANA IPv4 special-purpose registry (2024), ranges that are not
    /// globally reachable, plus multicast (RFC 5771) and the reserved class E.
    static let ipv4: [Range] = [
        Range("0.0.0.0/8", "\"this network\" (unspecified)"),
        Range("10.0.0.0/8", "a private network"),
        Range("100.64.0.0/10", "carrier-grade NAT shared space"),
        Range("127.0.0.0/8", "loopback"),
        Range("169.254.0.0/16", "link-local (cloud metadata lives here)"),
        Range("172.16.0.0/12", "a private network"),
        Range("192.0.0.0/24", "IETF protocol assignments"),
        Range("192.0.2.0/24", "documentation (TEST-NET-1)"),
        Range("192.88.99.0/24", "the deprecated 6to4 relay anycast"),
        Range("192.168.0.0/16", "a private network"),
        Range("198.18.0.0/15", "benchmarking"),
        Range("198.51.100.0/24", "documentation (TEST-NET-2)"),
        Range("203.0.113.0/24", "documentation (TEST-NET-3)"),
        Range("224.0.0.0/4", "multicast"),
        Range("240.0.0.0/4", "reserved (and broadcast)"),
    ]

    /// Inside 2000::/3, the IANA IPv6 special-purpose ranges to refuse; everything outside
    /// it is refused anyway, and named here when it has a name.
    static let ipv6: [Range] = [
        Range("::/128", "the unspecified address"),
        Range("::1/128", "loopback"),
        Range("::ffff:0:0/96", "an IPv4-mapped address"),
        Range("::/96", "an IPv4-compatible address (deprecated)"),
        Range("64:ff9b::/96", "NAT64 (embeds an IPv4 address)"),
        Range("64:ff9b:1::/48", "local-use NAT64"),
        Range("100::/64", "the discard prefix"),
        Range("2001::/32", "Teredo (embeds an IPv4 address)"),
        Range("2001:db8::/32", "documentation"),
        Range("2001::/23", "IETF protocol assignments"),
        Range("2002::/16", "6to4 (embeds an IPv4 address)"),
        Range("3fff::/20", "documentation"),
        Range("fc00::/7", "unique-local (private)"),
        Range("fe80::/10", "link-local"),
        Range("fec0::/10", "site-local (deprecated)"),
        Range("ff00::/8", "multicast"),
    ]
}
