import Foundation
import RouteEngine

/// Deferred links on iOS (`docs/landing.md`, "Deferred links"): when a landing would send a
/// phone without the app to the App Store, it shows a page whose "Get the app" button copies a
/// hand-off text to the pasteboard — the link and when it was made, `https://host/path#waymark=T`
/// (`handOffText`) — and then goes to the store. After the install, the app's first screen
/// offers a system paste control (`UIPasteControl`, SwiftUI's `PasteButton`: no prompt, as the
/// person tapped it); the string it gets goes to `intent(fromPasted:)`. The library never reads
/// the pasteboard itself, and nothing of the person or the device is read: the text is the only
/// evidence, and the person handed it over.
///
/// A text opens nothing (nil) unless it is, whitespace around it aside, at most
/// `maximumBytes` bytes of one `https` link on one of `hosts` (the host without case, no user
/// name, no space or control character), followed by `#waymark=` and the seconds since 1970
/// when it was made; at most `maximumAge` before now and not more than five minutes after it;
/// and not opened before on this install. An opened text is remembered (a SHA-256 digest of
/// it, the newest `remembered`) in `directory`, written durably before the intent is returned.
public final class DeferredLink: @unchecked Sendable {
    public static let maximumAge: TimeInterval = 86_400
    public static let maximumBytes = 2_300
    public static let remembered = 256
    static let marker = "#waymark="

    private let file: URL
    private let hosts: Set<String>
    private let maximumAge: TimeInterval
    private let now: @Sendable () -> Date
    private let lock = NSLock()

    /// - Parameters:
    ///   - directory: where opened hand-offs are remembered (`deferred-links`): Application Support, excluded from backups.
    ///   - hosts: the app's universal-link hosts (the schema's `hosts`).
    public init(directory: URL, hosts: [String], maximumAge: TimeInterval = DeferredLink.maximumAge, now: @escaping @Sendable () -> Date = { Date() }) {
        file = directory.appendingPathComponent("deferred-links")
        self.hosts = Set(hosts.map { $0.lowercased() })
        self.maximumAge = maximumAge
        self.now = now
    }

    /// The hand-off text of `link` made at `time` (seconds since 1970), as the landing page copies it.
    public static func handOffText(link: String, time: Int) -> String { link + marker + String(time) }

    /// The link of a pasted hand-off text, by the `deferred` door; nil by the rules above.
    public func intent(fromPasted text: String) -> Intent? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count <= Self.maximumBytes, let marker = trimmed.range(of: Self.marker, options: .backwards) else { return nil }
        let link = String(trimmed[..<marker.lowerBound]), digits = trimmed[marker.upperBound...]
        guard (1...12).contains(digits.utf8.count), digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let made = Int(digits),
              isOnHosts(link) else { return nil }
        let age = now().timeIntervalSince1970 - Double(made)
        guard age <= maximumAge, age >= -300 else { return nil }
        return remember(SHA256.hex(Array(trimmed.utf8))) ? .link(link, door: .deferred) : nil
    }

    private func isOnHosts(_ link: String) -> Bool {
        let bytes = Array(link.utf8)
        guard bytes.count > 8, String(decoding: bytes[0..<8], as: UTF8.self).lowercased() == "https://",
              bytes.allSatisfy({ $0 > 0x20 && $0 != 0x7F && $0 != UInt8(ascii: "#") }) else { return false }
        let rest = bytes[8...]
        let host = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") }
        return hosts.contains(String(decoding: host, as: UTF8.self).lowercased())
    }

    /// Adds `digest`; false when it was there already (or cannot be written: a text that
    /// cannot be remembered is not opened, so it cannot be opened twice).
    private func remember(_ digest: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let known = DurableFile.read(file).map { String(decoding: $0, as: UTF8.self).split(separator: "\n").map(String.init).filter { $0.utf8.count == 64 } } ?? []
        guard !known.contains(digest) else { return false }
        let kept = known.suffix(Self.remembered - 1) + [digest]
        return (try? DurableFile.write(Data(kept.joined(separator: "\n").utf8), to: file)) != nil
    }
}
