import RouteEngine
import CivilDate

// One file, though long: the parser reads a batch in one pass over its bytes, each field's
// rule beside the others (the types it fills are in Batch.swift, its limits in
// TelemetryLimits.swift).

/// Why a batch is refused whole.
public enum BatchError: Error, Equatable, Sendable {
    /// Not JSON, or not the shape of a batch: 400.
    case malformed(String)
    /// The client object is missing or wrong: 400.
    case invalidClient(String)
    /// More events than `maximumEvents`: 413.
    case tooManyEvents(Int)
    /// An event's `count` past `maximumCount`: 400, nothing counted.
    case countTooLarge(Int)
    /// The batch's counts add up to more than `maximumBatchCount`: 400, nothing counted.
    case batchTooLarge(Int)
    /// `client.dropped` past `maximumDropped`: 400, nothing counted.
    case droppedTooLarge(Int)
}

/// Reads a `POST /v1/telemetry` body in one pass, validating each event and mapping every
/// name to what the vocabulary knows. No `String` is made for a valid event.
public struct BatchParser: Sendable {
    public let vocabulary: Vocabulary
    public let limits: TelemetryLimits

    public init(vocabulary: Vocabulary, limits: TelemetryLimits = TelemetryLimits()) {
        self.vocabulary = vocabulary
        self.limits = limits
    }

    /// Parses `body` as of `now` (seconds since 1970).
    public func parse(_ body: UnsafeBufferPointer<UInt8>, now: Int) throws(BatchError) -> Batch {
        var scanner = JSONScanner(body)
        defer { scanner.deallocate() }
        var state = State(parser: self, now: now)
        do throws(JSONScanner.Malformed) {
            try state.batch(&scanner)
        } catch {
            if case .tooManyEvents? = state.failure { throw state.failure! }
            throw .malformed("The body is not valid JSON: \(error.message) at byte \(error.offset).")
        }
        if let failure = state.failure { throw failure }
        return state.batch
    }

    public func parse(_ body: [UInt8], now: Int) throws(BatchError) -> Batch {
        try body.withUnsafeBufferPointer { (bytes) throws(BatchError) in try parse(bytes, now: now) }
    }

    /// The parse in progress: the batch so far and the first batch-level failure.
    private struct State {
        let parser: BatchParser
        let now: Int
        var batch = Batch()
        var failure: BatchError?
        var routeSlots = Slots()
        var preconditionSlots = Slots()
        var dayCache = Timestamp.DayCache()
        let plain = PlainNames.shared

        init(parser: BatchParser, now: Int) {
            self.parser = parser
            self.now = now
        }

        var limits: TelemetryLimits { parser.limits }

        mutating func batch(_ scanner: inout JSONScanner) throws(JSONScanner.Malformed) {
            guard scanner.peek() == 0x7B else {
                try scanner.skipValue()
                scanner.skipWhitespace()
                guard scanner.atEnd else { throw scanner.fail("unexpected bytes after the value") }
                return note(.malformed("The body must be a JSON object {\"client\": …, \"events\": […]}."))
            }
            scanner.offset += 1
            var sawClient = false, sawEvents = false, sawID = false
            if !scanner.consume(0x7D) {
                repeat {
                    let key = try scanner.string()
                    try scanner.expect(0x3A, "':'")
                    if key.equals("client") {
                        if sawClient { note(.malformed("The field \"client\" appears twice.")) }
                        sawClient = true
                        try client(&scanner)
                    } else if key.equals("events") {
                        if sawEvents { note(.malformed("The field \"events\" appears twice.")) }
                        sawEvents = true
                        try events(&scanner)
                    } else if key.equals("batch") {
                        if sawID { note(.malformed("The field \"batch\" appears twice.")) }
                        sawID = true
                        if let text = try stringValue(&scanner), let id = HexID(hex: text.bytes) {
                            batch.id = id
                        } else {
                            note(.malformed("\"batch\" must be the batch's id: 32 lowercase hex digits."))
                        }
                    } else {
                        note(.malformed("Unknown field \"\(key.string)\"; a batch has \"batch\", \"client\" and \"events\"."))
                        try scanner.skipValue()
                    }
                } while try scanner.more(close: 0x7D)
            }
            scanner.skipWhitespace()
            guard scanner.atEnd else { throw scanner.fail("unexpected bytes after the batch") }
            if !sawClient { note(.invalidClient("The batch has no \"client\" ({\"platform\", \"appVersion\", \"revision\"}).")) }
            if !sawEvents { note(.malformed("The batch has no \"events\" array.")) }
        }

        mutating func note(_ error: BatchError) {
            if failure == nil { failure = error }
        }

        mutating func client(_ scanner: inout JSONScanner) throws(JSONScanner.Malformed) {
            guard scanner.peek() == 0x7B else {
                note(.invalidClient("\"client\" must be an object."))
                return try scanner.skipValue()
            }
            try scanner.expect(0x7B, "'{'")
            var platform: Platform?
            var version: JSONScanner.Text?
            if !scanner.consume(0x7D) {
                repeat {
                    let key = try scanner.string()
                    try scanner.expect(0x3A, "':'")
                    if key.equals("platform") {
                        let value = scanner.peek() == 0x22 ? try scanner.string() : nil
                        if value == nil { try scanner.skipValue() }
                        if let value, value.equals("ios") { platform = .ios }
                        else if let value, value.equals("android") { platform = .android }
                        else { note(.invalidClient("client.platform must be \"ios\" or \"android\".")) }
                    } else if key.equals("appVersion") {
                        if scanner.peek() == 0x22 { version = try scanner.string() } else { try scanner.skipValue() }
                        if let text = version, Self.isVersion(text, limit: limits.maximumNameBytes) {} else {
                            version = nil
                            note(.invalidClient("client.appVersion must be a version string such as \"5.3.0\"."))
                        }
                    } else if key.equals("revision") {
                        if let number = try integerValue(&scanner), number >= 0 {
                            batch.revision = number <= parser.vocabulary.latestRevision && number <= TelemetryDimension.revision.capacity ? UInt32(number) : 0
                        } else {
                            note(.invalidClient("client.revision must be a whole number."))
                        }
                    } else if key.equals("dropped") {
                        if let number = try integerValue(&scanner), number >= 0 {
                            if number > limits.maximumDropped { note(.droppedTooLarge(limits.maximumDropped)) }
                            else { batch.droppedByClient = UInt32(number) }
                        } else {
                            note(.invalidClient("client.dropped must be a whole number from 0 to \(limits.maximumDropped)."))
                        }
                    } else if key.equals("source") {
                        if let text = try stringValue(&scanner), let source = HexID(hex: text.bytes) {
                            batch.source = source
                        } else {
                            note(.invalidClient("client.source must be the install's source key for the day: 32 lowercase hex digits."))
                        }
                    } else if key.equals("cohort") {
                        if let number = try integerValue(&scanner), (0...99).contains(number) {
                            batch.cohort = UInt8(number)
                        } else {
                            note(.invalidClient("client.cohort must be a whole number from 0 to 99."))
                        }
                    } else {
                        note(.invalidClient("Unknown field client.\(key.string); a client has platform, appVersion, revision, cohort, source and dropped."))
                        try scanner.skipValue()
                    }
                } while try scanner.more(close: 0x7D)
            }
            guard let platform else { return note(.invalidClient("client.platform (\"ios\" or \"android\") is required.")) }
            guard let version else { return note(.invalidClient("client.appVersion is required.")) }
            batch.platform = platform
            batch.appVersion = parser.vocabulary.appVersions[Int(platform.rawValue)].index(of: version.bytes) != nil ? Array(version.bytes) : nil
        }

        /// Digits, letters, `.`, `-` and `+` (semantic versions and build numbers).
        static func isVersion(_ text: JSONScanner.Text, limit: Int) -> Bool {
            !text.bytes.isEmpty && text.count <= limit && text.bytes.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2E || byte == 0x2D || byte == 0x2B
            }
        }

        mutating func events(_ scanner: inout JSONScanner) throws(JSONScanner.Malformed) {
            guard scanner.peek() == 0x5B else {
                note(.malformed("\"events\" must be an array."))
                return try scanner.skipValue()
            }
            try scanner.expect(0x5B, "'['")
            if scanner.consume(0x5D) { return }
            var index = 0, claimed = 0
            batch.tallies.reserveCapacity(64)
            repeat {
                if index == limits.maximumEvents {
                    // Refused whole; no need to read the rest.
                    note(.tooManyEvents(limits.maximumEvents))
                    throw JSONScanner.Malformed(offset: scanner.offset, message: "too many events")
                }
                var error: String?
                var shape: [UInt8]?
                let tally = try event(&scanner, error: &error, shape: &shape)
                if let tally, error == nil {
                    claimed += Int(tally.count)
                    if claimed > limits.maximumBatchCount { note(.batchTooLarge(limits.maximumBatchCount)) }
                    batch.tallies.append(tally)
                    if let shape {
                        // Whatever the client sent, only what the rules keep is kept.
                        let normalised = LinkShape(link: String(decoding: shape, as: UTF8.self)).description
                        // A phone's claim counts once, whatever its count: one source cannot outweigh many.
                        batch.shapes.append(ShapeTally(minute: tally.minute, entry: tally.entry, shape: Array(normalised.utf8), count: 1))
                    }
                } else {
                    batch.rejected.append(Rejection(index: index, error: error ?? "The event is not valid."))
                }
                index += 1
            } while try scanner.more(close: 0x5D)
        }

        /// One event; nil with `error` set when it is not valid. Reads the whole value either way.
        /// `shape`: the event's unknown-link shape, when it carries one.
        mutating func event(_ scanner: inout JSONScanner, error: inout String?, shape: inout [UInt8]?) throws(JSONScanner.Malformed) -> Tally? {
            guard scanner.peek() == 0x7B else {
                error = "An event must be an object."
                try scanner.skipValue()
                return nil
            }
            try scanner.expect(0x7B, "'{'")
            var seconds: Int?
            var entry: EntryPoint?, outcome: Outcome?, reason: FailureReason?
            var route: UInt16 = 0, precondition: UInt16 = 0
            var count = 1
            var seen: UInt16 = 0
            func fail(_ message: String) { if error == nil { error = message } }
            if !scanner.consume(0x7D) {
                repeat {
                    // A key spelled plainly is matched in place; any other is read as a string.
                    var field = -1
                    var key: JSONScanner.Text?
                    if let known = plain.fields.match(&scanner) {
                        field = known
                    } else {
                        key = try scanner.string()
                        field = Self.eventField(key!)
                    }
                    try scanner.expect(0x3A, "':'")
                    if field >= 0 {
                        if seen & (1 &<< field) != 0 { fail("The field \"\(PlainNames.fieldNames[field])\" appears twice.") }
                        seen |= 1 &<< field
                    }
                    switch field {
                    case 0:
                        guard let text = try stringValue(&scanner) else { fail("ts must be an RFC 3339 time such as \"2026-11-21T10:00:00Z\"."); continue }
                        guard let time = Timestamp.parse(text.bytes, cache: &dayCache) else { fail("ts must be an RFC 3339 time such as \"2026-11-21T10:00:00Z\"."); continue }
                        seconds = time
                    case 1:
                        guard let value = try enumerationValue(plain.entryPoints.match(&scanner), &scanner, Self.entryPoint) else {
                            fail("entry must be universalLink, scheme, push, inApp or deferred."); continue
                        }
                        entry = value
                    case 2:
                        guard let value = try enumerationValue(plain.outcomes.match(&scanner), &scanner, Self.outcome) else {
                            fail("outcome must be proceed, gated or notFound."); continue
                        }
                        outcome = value
                    case 3:
                        guard let value = try enumerationValue(plain.reasons.match(&scanner), &scanner, Self.reason) else {
                            fail("reason must be malformed, unknownRoute, validationFailed or expired."); continue
                        }
                        reason = value
                    case 4:
                        guard let text = try stringValue(&scanner), (1...limits.maximumNameBytes).contains(text.count) else {
                            fail("route must be a route id of 1 to \(limits.maximumNameBytes) bytes."); continue
                        }
                        route = Self.slot(for: parser.vocabulary.routes.index(of: text.bytes), in: &routeSlots, names: &batch.routes, table: parser.vocabulary.routes)
                    case 5:
                        guard let text = try stringValue(&scanner), (1...limits.maximumNameBytes).contains(text.count) else {
                            fail("destination must be a destination name of 1 to \(limits.maximumNameBytes) bytes."); continue
                        }
                    case 6:
                        guard let text = try stringValue(&scanner), (1...limits.maximumNameBytes).contains(text.count) else {
                            fail("precondition must be a precondition name of 1 to \(limits.maximumNameBytes) bytes."); continue
                        }
                        precondition = Self.slot(for: parser.vocabulary.preconditions.index(of: text.bytes), in: &preconditionSlots,
                                            names: &batch.preconditions, table: parser.vocabulary.preconditions)
                    case 7:
                        guard let value = try integerValue(&scanner), value >= 1 else {
                            fail("count must be a whole number from 1 to \(limits.maximumCount)."); continue
                        }
                        // More than one install resolves in a minute: the whole batch is refused.
                        if value > limits.maximumCount { note(.countTooLarge(limits.maximumCount)) }
                        count = min(value, limits.maximumCount)
                    case 8:
                        guard let text = try stringValue(&scanner), (1...limits.maximumShapeBytes).contains(text.count) else {
                            fail("shape must be a link's shape of 1 to \(limits.maximumShapeBytes) bytes, such as \"/product/:param\"."); continue
                        }
                        shape = Array(text.bytes)
                    default:
                        try scanner.skipValue()
                        let key = key!
                        fail(key.equals("url") || key.equals("link")
                             ? "Raw URLs are not accepted (links can carry personal data); send the route id."
                             : "Unknown field \"\(key.string)\".")
                    }
                } while try scanner.more(close: 0x7D)
            }
            if error != nil { return nil }
            guard let seconds else { error = "ts is required."; return nil }
            guard let entry else { error = "entry is required."; return nil }
            guard let outcome else { error = "outcome is required."; return nil }
            if outcome == .notFound, reason == nil { error = "A notFound event needs a reason."; return nil }
            if outcome != .notFound, reason != nil { error = "Only a notFound event has a reason."; return nil }
            if outcome != .gated, precondition != 0 { error = "Only a gated event has a precondition."; return nil }
            if shape != nil, reason != .unknownRoute { error = "Only a notFound event with reason unknownRoute has a shape."; return nil }
            if seconds > now + limits.maximumClockSkew { error = "ts is in the future."; return nil }
            if seconds < now - limits.hourRetention { error = "ts is older than the \(limits.hourRetention / 86_400)-day retention."; return nil }
            let minute = seconds >= 0 ? seconds / 60 : (seconds - 59) / 60
            return Tally(minute: Int32(clamping: minute), entry: entry.rawValue, outcome: outcome.rawValue, reason: (reason ?? FailureReason.none).rawValue,
                         route: route, precondition: precondition, count: UInt32(count))
        }

        /// The value if it is a string; otherwise it is skipped and nil returned.
        func stringValue(_ scanner: inout JSONScanner) throws(JSONScanner.Malformed) -> JSONScanner.Text? {
            if scanner.peek() == 0x22 { return try scanner.string() }
            try scanner.skipValue()
            return nil
        }

        /// The value of an enumeration: `plain` when it was matched in place, or else the string
        /// read and named by `named`; nil (the value skipped) when it is neither.
        @inline(__always)
        func enumerationValue<Value>(_ plain: Value?, _ scanner: inout JSONScanner, _ named: (JSONScanner.Text) -> Value?) throws(JSONScanner.Malformed) -> Value? {
            if let plain { return plain }
            guard let text = try stringValue(&scanner) else { return nil }
            return named(text)
        }

        /// The value if it is an integer that fits; otherwise it is skipped and nil returned.
        func integerValue(_ scanner: inout JSONScanner) throws(JSONScanner.Malformed) -> Int? {
            guard let byte = scanner.peek(), byte == 0x2D || (0x30...0x39).contains(byte) else {
                try scanner.skipValue()
                return nil
            }
            guard case .integer(let value) = try scanner.number() else { return nil }
            return value
        }

        /// The batch-local slot of a vocabulary name: `other` (1) when it is not known.
        @inline(__always)
        static func slot(for index: Int?, in slots: inout Slots, names: inout [[UInt8]], table: NameTable) -> UInt16 {
            guard let index else { return UInt16(Interned.other) }
            if let slot = slots.slot(of: index) { return slot }
            let slot = UInt16(names.count + 2)
            names.append(table.names[index])
            slots.add(index, slot)
            return slot
        }

        /// The number of a field read as a string (spelled with escapes, or unknown: -1).
        static func eventField(_ key: JSONScanner.Text) -> Int {
            PlainNames.fieldNames.firstIndex { key.equals($0) } ?? -1
        }

        // The names of each enumeration have distinct lengths: one comparison each.
        static func entryPoint(_ text: JSONScanner.Text) -> EntryPoint? {
            switch text.count {
            case 13: text.equals("universalLink") ? .universalLink : nil
            case 6: text.equals("scheme") ? .scheme : nil
            case 4: text.equals("push") ? .push : nil
            case 5: text.equals("inApp") ? .inApp : nil
            case 8: text.equals("deferred") ? .deferred : nil
            default: nil
            }
        }

        static func outcome(_ text: JSONScanner.Text) -> Outcome? {
            switch text.count {
            case 7: text.equals("proceed") ? .proceed : nil
            case 5: text.equals("gated") ? .gated : nil
            case 8: text.equals("notFound") ? .notFound : nil
            default: nil
            }
        }

        static func reason(_ text: JSONScanner.Text) -> FailureReason? {
            switch text.count {
            case 9: text.equals("malformed") ? .malformed : nil
            case 12: text.equals("unknownRoute") ? .unknownRoute : nil
            case 16: text.equals("validationFailed") ? .validationFailed : nil
            case 7: text.equals("expired") ? .expired : nil
            default: nil
            }
        }
    }
}

/// The names an event is usually spelled with, matched in place: its fields, by number, and
/// the values of its enumerations that fit a `PlainString` (`validationFailed` does not, and
/// is read by `reason(_:)`).
struct PlainNames: Sendable {
    static let shared = PlainNames()

    /// The fields of an event, by number: the cases of the switch in `event`, the bits of
    /// its `seen`.
    static let fieldNames: [StaticString] = ["ts", "entry", "outcome", "reason", "route", "destination", "precondition", "count", "shape"]

    let fields = PlainTable<Int>(fieldNames.enumerated().map { ($1, $0) })
    let entryPoints = PlainTable<EntryPoint>([("universalLink", .universalLink), ("scheme", .scheme), ("push", .push), ("inApp", .inApp),
                                              ("deferred", .deferred)])
    let outcomes = PlainTable<Outcome>([("proceed", .proceed), ("gated", .gated), ("notFound", .notFound)])
    let reasons = PlainTable<FailureReason>([("malformed", .malformed), ("unknownRoute", .unknownRoute), ("expired", .expired)])
}

/// Strings matched in place and what each stands for, with the entry to try for each
/// first byte (one comparison when no other entry starts with that byte). Allocated once,
/// for the life of the process, and never written again: a parse reads the tables through
/// pointers, with no copy and no reference counting.
struct PlainTable<Value: Sendable>: @unchecked Sendable {
    private let entries: UnsafeBufferPointer<(PlainString, Value)>
    /// First byte → the index of the only entry starting with it; -1 none, -2 several.
    private let byFirstByte: UnsafeBufferPointer<Int8>

    init(_ list: [(StaticString, Value)]) {
        precondition(list.count < 127 && list.allSatisfy { $0.0.utf8CodeUnitCount > 0 })
        let entries = UnsafeMutableBufferPointer<(PlainString, Value)>.allocate(capacity: list.count)
        _ = entries.initialize(from: list.map { (PlainString($0.0), $0.1) })
        var firsts = [Int8](repeating: -1, count: 256)
        for (index, (name, _)) in list.enumerated() {
            let first = Int(name.utf8Start.pointee)
            firsts[first] = firsts[first] == -1 ? Int8(index) : -2
        }
        let byFirstByte = UnsafeMutableBufferPointer<Int8>.allocate(capacity: 256)
        _ = byFirstByte.initialize(from: firsts)
        self.entries = UnsafeBufferPointer(entries)
        self.byFirstByte = UnsafeBufferPointer(byFirstByte)
    }

    /// The value of the string next when it is one of these spelled plainly (consumed);
    /// nil when it is not, with nothing consumed.
    @inline(__always)
    func match(_ scanner: inout JSONScanner) -> Value? {
        guard let words = scanner.wordsAfterQuote() else { return nil }
        let pick = Int(byFirstByte[Int(words.0 & 0xFF)])
        if pick >= 0 { return scanner.consume(entries[pick].0, in: words) ? entries[pick].1 : nil }
        if pick == -1 { return nil }
        for entry in entries where scanner.consume(entry.0, in: words) { return entry.1 }
        return nil
    }
}

/// Vocabulary index → batch-local slot. A batch names a handful of routes: a short list
/// scanned in order, and a dictionary only once it grows past that.
struct Slots {
    private var list: [(index: Int, slot: UInt16)] = []
    private var large: [Int: UInt16]?

    func slot(of index: Int) -> UInt16? {
        if let large { return large[index] }
        for entry in list where entry.index == index { return entry.slot }
        return nil
    }

    mutating func add(_ index: Int, _ slot: UInt16) {
        if large != nil { large![index] = slot; return }
        if list.isEmpty { list.reserveCapacity(16) }
        list.append((index, slot))
        if list.count > 32 { large = Dictionary(uniqueKeysWithValues: list.map { ($0.index, $0.slot) }) }
    }
}
