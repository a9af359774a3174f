/// The dimensions a resolution is counted by. Each has a small, fixed or capped set of
/// values, so the counts cannot grow without bound whatever clients send.
public enum Platform: UInt8, CaseIterable, Sendable {
    /// `other`: a browser that is neither (a desktop); only link landings count it, clients
    /// report `ios` or `android`.
    case ios, android, other

    public var name: String { ["ios", "android", "other"][Int(rawValue)] }
}

public enum EntryPoint: UInt8, CaseIterable, Sendable {
    /// `web`: the link was opened where the app did not take it and Waymark answered it
    /// (link landing); counted by the server, never reported by a client.
    /// `bot`: a landing asked for by a crawler, a link checker or another declared bot, or
    /// with `HEAD` (`docs/landing.md`); counted by the server, and left out of every count
    /// that stands for people: opens, the rollout guard, the impact preview, and the counts
    /// a query gets unless it asks for the entry by name.
    /// `deferred`: a link handed to the app after its install (Android's Play Install
    /// Referrer, iOS's paste hand-off; `docs/landing.md`, "Deferred links"), reported by the client.
    case universalLink, scheme, push, inApp, web, bot, deferred

    public var name: String { ["universalLink", "scheme", "push", "inApp", "web", "bot", "deferred"][Int(rawValue)] }

    /// Whether a client reports this entry (the others the server counts itself).
    public var isClients: Bool { self != .web && self != .bot }
}

public enum Outcome: UInt8, CaseIterable, Sendable {
    case proceed, gated, notFound

    public var name: String { ["proceed", "gated", "notFound"][Int(rawValue)] }
}

/// Why a resolution ended in `notFound`; `none` for the other outcomes.
public enum FailureReason: UInt8, CaseIterable, Sendable {
    case none, malformed, unknownRoute, validationFailed, expired

    public var name: String { ["none", "malformed", "unknownRoute", "validationFailed", "expired"][Int(rawValue)] }
}

/// A dimension of the counts, as named in queries (`groupBy=route,reason`).
public enum TelemetryDimension: String, CaseIterable, Sendable {
    case platform, appVersion, revision, entry, outcome, reason, route, precondition

    /// Where the dimension sits in a packed `CountKey` (shift, width in bits). Layout 2
    /// (snapshot `WMTSNAP3`); layout 1 (`WMTSNAP1`/`2`) is `CountKey.fromLayout1`'s.
    var field: (shift: UInt64, width: UInt64) {
        switch self {
        case .platform: (0, 2)
        case .entry: (2, 3)
        case .outcome: (5, 2)
        case .reason: (7, 3)
        case .precondition: (10, 6)
        case .appVersion: (16, 12)
        case .revision: (28, 20)
        case .route: (48, 16)
        }
    }

    var mask: UInt64 { ((1 << field.width) - 1) << field.shift }

    public func value(of key: UInt64) -> UInt64 { (key >> field.shift) & ((1 << field.width) - 1) }

    /// The largest value the packed field holds.
    var capacity: Int { (1 << Int(field.width)) - 1 }
}

/// The reserved values of the interned dimensions (routes, preconditions, app versions).
enum Interned {
    /// No value: an event without a route or precondition.
    static let none: UInt64 = 0
    /// A value no revision or schema ever had, or one past the configured cap.
    static let other: UInt64 = 1
    /// What a client writes for it, as the name a batch may carry.
    static let otherName: [UInt8] = Array("other".utf8)
}

/// All the dimensions of one count, packed in 64 bits (layout in `TelemetryDimension.field`).
struct CountKey {
    static func pack(platform: UInt8, entry: UInt8, outcome: UInt8, reason: UInt8, precondition: UInt64,
                     appVersion: UInt64, revision: UInt64, route: UInt64) -> UInt64 {
        typealias D = TelemetryDimension
        return UInt64(platform) << D.platform.field.shift | UInt64(entry) << D.entry.field.shift
            | UInt64(outcome) << D.outcome.field.shift | UInt64(reason) << D.reason.field.shift
            | precondition << D.precondition.field.shift | appVersion << D.appVersion.field.shift
            | revision << D.revision.field.shift | route << D.route.field.shift
    }

    /// A key of layout 1 (snapshots `WMTSNAP1` and `2`: platform 1 bit, entry 2, outcome 2,
    /// reason 3, precondition 6, app version 12, revision 20, route 18) in today's layout; nil
    /// for a route id past today's 16 bits, which no store reached (the route cap was 10,000).
    static func fromLayout1(_ key: UInt64) -> UInt64? {
        func bits(_ shift: UInt64, _ width: UInt64) -> UInt64 { (key >> shift) & ((1 << width) - 1) }
        let route = bits(46, 18)
        guard route <= UInt64(TelemetryDimension.route.capacity) else { return nil }
        return pack(platform: UInt8(bits(0, 1)), entry: UInt8(bits(1, 2)), outcome: UInt8(bits(3, 2)), reason: UInt8(bits(5, 3)),
                    precondition: bits(8, 6), appVersion: bits(14, 12), revision: bits(26, 20), route: route)
    }
}

/// What the server knows exists: route ids any revision ever had, the preconditions and app
/// versions schemas declare, the newest revision. Anything else a client reports is counted
/// as `other`, so a client cannot add dimension values.
public struct Vocabulary: Sendable {
    public var routes: NameTable
    public var preconditions: NameTable
    /// App versions with a schema, per platform.
    public var appVersions: [NameTable]
    public var latestRevision: Int

    public init(routes: [String] = [], preconditions: [String] = [], appVersions: [Platform: [String]] = [:], latestRevision: Int = 0) {
        self.routes = NameTable(routes)
        self.preconditions = NameTable(preconditions)
        self.appVersions = Platform.allCases.map { NameTable(appVersions[$0] ?? []) }
        self.latestRevision = latestRevision
    }
}

/// A set of names looked up by their UTF-8 bytes without making a `String`: open
/// addressing over FNV-1a hashes. Built once per vocabulary, read by every ingest thread.
public struct NameTable: Sendable {
    public private(set) var names: [[UInt8]] = []
    private var slots: [Int32]
    private let mask: Int

    public init(_ list: [String]) {
        var unique: [[UInt8]] = []
        var seen = Set<String>()
        for name in list where seen.insert(name).inserted { unique.append(Array(name.utf8)) }
        var capacity = 16
        while capacity < unique.count * 2 { capacity <<= 1 }
        mask = capacity - 1
        slots = [Int32](repeating: -1, count: capacity)
        for name in unique {
            let index = Int32(names.count)
            names.append(name)
            let hash = name.withUnsafeBufferPointer { Self.hash($0) }
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = index
        }
    }

    public var count: Int { names.count }

    /// The index of the name spelled by `bytes`, if it is in the table.
    public func index(of bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var slot = Int(truncatingIfNeeded: Self.hash(bytes)) & mask
        while true {
            let index = slots[slot]
            if index < 0 { return nil }
            if names[Int(index)].withUnsafeBufferPointer({ sameBytes($0, bytes) }) { return Int(index) }
            slot = (slot + 1) & mask
        }
    }

    /// Eight bytes at a time, each word mixed into the hash by a full-width multiply. A name
    /// of eight bytes or more ends with the word of its last eight bytes; a shorter one is
    /// read as two overlapping halves (4 to 7 bytes) or as its first, middle and last bytes,
    /// as wyhash reads short keys.
    public static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        @inline(__always) func mix(_ hash: UInt64, _ word: UInt64) -> UInt64 {
            // The full 128-bit product, halves folded: the low half's low bits see only the
            // low bits of the input, the high half sees all of them.
            let (high, low) = (hash ^ word).multipliedFullWidth(by: 0x9E37_79B9_7F4A_7C15)
            return high ^ low
        }
        var hash = UInt64(bytes.count)
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return mix(hash, 0) }
        let raw = UnsafeRawPointer(base)
        guard bytes.count >= 8 else {
            if bytes.count >= 4 {
                let low = raw.loadUnaligned(as: UInt32.self), high = raw.loadUnaligned(fromByteOffset: bytes.count - 4, as: UInt32.self)
                return mix(hash, UInt64(low) | UInt64(high) << 32)
            }
            return mix(hash, UInt64(base[0]) << 16 | UInt64(base[bytes.count / 2]) << 8 | UInt64(base[bytes.count - 1]))
        }
        var offset = 0
        while offset + 8 < bytes.count {
            hash = mix(hash, raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        return mix(hash, raw.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
    }
}
