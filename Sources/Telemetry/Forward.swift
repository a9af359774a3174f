import RouteEngine

/// Counts a follower accepted, on their way to its primary: every batch the follower
/// committed after its previous forward, through its log sequence `through`, merged into a
/// few batches (one per platform, app version and revision, whatever the events were).
///
/// `node` names the follower's data directory (random, made once), and `through` only
/// rises from one forward to the next, so the primary applies each `(node, through)` once:
/// a forward retried after a lost answer, or after the follower died before it heard one,
/// is acknowledged and not counted again (`Counts.forwarded`).
///
/// On the wire and in the follower's outbox file:
///
///     "WMFWD001" node(u16 length + bytes) through(u64) count(u32) frame… crc32c(u32)
///
/// each frame a batch as in the log (`Frame`, its own length and checksum).
public struct Forward: Sendable {
    public var node: [UInt8]
    public var through: UInt64
    public var batches: [Batch]

    public init(node: [UInt8], through: UInt64, batches: [Batch]) {
        self.node = node
        self.through = through
        self.batches = batches
    }

    static let magic = Array("WMFWD001".utf8)
    /// Node names are what `TelemetryStore` makes: 32 lowercase hex digits.
    static let nodeLength = 32

    /// Events in all the batches (each tally's count).
    public var events: UInt64 { batches.reduce(0) { $0 + $1.tallies.reduce(0) { $0 + UInt64($1.count) } } }

    public var encoded: [UInt8] {
        var writer = ByteWriter()
        writer.bytes.append(contentsOf: Self.magic)
        writer.name(node)
        writer.u64(through)
        writer.u32(UInt32(batches.count))
        for batch in batches { Frame.encode(batch, sequence: 0, into: &writer.bytes) }
        writer.u32(writer.bytes.withUnsafeBytes(CRC32C.checksum))
        return writer.bytes
    }

    /// Reads and checks an encoded forward; the error says what is wrong, for a `400`.
    public static func decode(_ bytes: [UInt8]) -> Result<Forward, ForwardError> {
        bytes.withUnsafeBytes { decode($0) }
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) -> Result<Forward, ForwardError> {
        guard bytes.count >= magic.count + 4, bytes.prefix(magic.count).elementsEqual(magic) else {
            return .failure(ForwardError("The body is not a forward of counts (it does not start with WMFWD001)."))
        }
        let body = UnsafeRawBufferPointer(rebasing: bytes[0..<bytes.count - 4])
        var trailer = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - 4)...]))
        guard trailer.u32() == CRC32C.checksum(body) else { return .failure(ForwardError("The forward's checksum is wrong (a damaged body).")) }
        var reader = ByteReader(body)
        reader.offset = magic.count
        guard let node = reader.name(), node.count == nodeLength,
              node.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            return .failure(ForwardError("The forward's node is not 32 lowercase hex digits."))
        }
        guard let through = reader.u64(), through > 0, let count = reader.u32() else {
            return .failure(ForwardError("The forward's header is cut short or its sequence is 0."))
        }
        var batches: [Batch] = []
        for index in 0..<Int(count) {
            guard let length = reader.u32().map(Int.init), let crc = reader.u32(), length <= Frame.maximumPayload, reader.remaining >= length else {
                return .failure(ForwardError("Batch \(index) of the forward is cut short."))
            }
            let payload = UnsafeRawBufferPointer(rebasing: body[reader.offset..<reader.offset + length])
            guard CRC32C.checksum(payload) == crc, case (_, .batch(let batch))? = Frame.decode(payload) else {
                return .failure(ForwardError("Batch \(index) of the forward is damaged or not a batch."))
            }
            batches.append(batch)
            reader.offset += length
        }
        guard reader.remaining == 0 else { return .failure(ForwardError("The forward has bytes after its last batch.")) }
        return .success(Forward(node: node, through: through, batches: batches))
    }
}

public struct ForwardError: Error, Equatable, Sendable {
    public let message: String

    init(_ message: String) { self.message = message }
}

/// What the log holds: a batch accepted here, or counts a follower forwarded.
enum LogEntry: Sendable {
    case batch(Batch)
    case forward(Forward)

    var batch: Batch? {
        if case .batch(let batch) = self { batch } else { nil }
    }
}

extension Counts {
    /// Applies a follower's forward unless this `(node, through)` was applied before;
    /// returns whether it counted.
    @discardableResult
    mutating func apply(_ forward: Forward, sequence: UInt64, now: Int) -> Bool {
        defer { lastSequence = max(lastSequence, sequence) }
        guard forwarded[forward.node, default: 0] < forward.through else { return false }
        for batch in forward.batches { apply(batch, sequence: sequence, now: now) }
        forwarded[forward.node] = forward.through
        return true
    }

    mutating func apply(_ entry: LogEntry, sequence: UInt64, now: Int, live: Bool = false) {
        switch entry {
        case .batch(let batch): apply(batch, sequence: sequence, now: now, live: live)
        case .forward(let forward): apply(forward, sequence: sequence, now: now)
        }
    }

    /// Everything counted here as batches, one per platform, app version and revision,
    /// so that applying them to empty counts gives these counts back (interned names
    /// travel as names; `other` stays `other`). Minutes come from the minute buckets; what
    /// an hour holds beyond its kept minutes (minutes past retention) is put on the hour's
    /// first minute.
    func batches() -> [Batch] {
        let fixedMask = TelemetryDimension.platform.mask | TelemetryDimension.appVersion.mask | TelemetryDimension.revision.mask
        var tallies: [UInt64: [(minute: Int32, key: UInt64, count: UInt64)]] = [:]
        var inMinutes: [Int32: [UInt64: UInt64]] = [:]  // hour → key → counted in kept minutes
        for (minute, table) in minutes {
            let hour = Self.hour(ofMinute: minute)
            for (key, count) in table {
                tallies[key & fixedMask, default: []].append((minute, key, count))
                inMinutes[hour, default: [:]][key, default: 0] += count
            }
        }
        for (hour, table) in hours {
            for (key, count) in table {
                let rest = count - min(count, inMinutes[hour]?[key] ?? 0)
                if rest > 0 { tallies[key & fixedMask, default: []].append((hour * 60, key, rest)) }
            }
        }
        var batches: [Batch] = []
        for fixed in tallies.keys.sorted() {
            var batch = Batch()
            batch.platform = Platform(rawValue: UInt8(TelemetryDimension.platform.value(of: fixed))) ?? .ios
            let appVersion = TelemetryDimension.appVersion.value(of: fixed)
            batch.appVersion = appVersion == 0 ? nil : Array(appVersions.name(appVersion).utf8)
            batch.revision = UInt32(TelemetryDimension.revision.value(of: fixed))
            var routeSlots: [UInt64: UInt16] = [:], preconditionSlots: [UInt64: UInt16] = [:]
            func slot(_ id: UInt64, _ slots: inout [UInt64: UInt16], _ names: inout [[UInt8]], _ interner: Interner) -> UInt16 {
                if id < 2 { return UInt16(id) }
                if let known = slots[id] { return known }
                names.append(Array(interner.name(id).utf8))
                slots[id] = UInt16(names.count + 1)
                return UInt16(names.count + 1)
            }
            for (minute, key, count) in tallies[fixed]!.sorted(by: { ($0.minute, $0.key) < ($1.minute, $1.key) }) {
                if batch.routes.count >= Self.namesPerBatch || batch.tallies.count >= Self.talliesPerBatch {
                    // A batch names at most 65,533 routes (16-bit slots): go on in another.
                    batches.append(batch)
                    batch.routes = []
                    batch.preconditions = []
                    batch.tallies = []
                    routeSlots = [:]
                    preconditionSlots = [:]
                }
                let route = slot(TelemetryDimension.route.value(of: key), &routeSlots, &batch.routes, routes)
                let precondition = slot(TelemetryDimension.precondition.value(of: key), &preconditionSlots, &batch.preconditions, preconditions)
                var left = count
                while left > 0 {  // a tally holds 32 bits of count
                    let part = min(left, UInt64(UInt32.max))
                    batch.tallies.append(Tally(minute: minute, entry: UInt8(TelemetryDimension.entry.value(of: key)),
                                               outcome: UInt8(TelemetryDimension.outcome.value(of: key)),
                                               reason: UInt8(TelemetryDimension.reason.value(of: key)),
                                               route: route, precondition: precondition, count: UInt32(part)))
                    left -= part
                }
            }
            batches.append(batch)
        }
        // Unknown-link shapes, one batch per platform: each held shape with its count, on the
        // first platform and entry point it was seen through, in the minute last seen (the
        // sketch keeps no more than that of how they were split).
        var byPlatform: [Platform: [ShapeTally]] = [:]
        for entry in shapes.entries {
            let platform = Platform.allCases.first { entry.note.platforms & (1 << $0.rawValue) != 0 } ?? .ios
            let point = EntryPoint.allCases.first { entry.note.entries & (1 << $0.rawValue) != 0 } ?? .universalLink
            var left = entry.count
            while left > 0 {
                let part = min(left, UInt64(UInt32.max))
                byPlatform[platform, default: []].append(ShapeTally(minute: entry.note.lastMinute, entry: point.rawValue, shape: Array(entry.key.utf8),
                                                                    count: UInt32(part)))
                left -= part
            }
        }
        for platform in Platform.allCases {
            guard let shapes = byPlatform[platform] else { continue }
            var batch = Batch()
            batch.platform = platform
            batch.shapes = shapes
            batches.append(batch)
        }
        return batches
    }

    static let namesPerBatch = 60_000
    static let talliesPerBatch = 1_000_000

    /// Whether nothing is counted.
    var isEmpty: Bool { hours.isEmpty && minutes.isEmpty && shapes.total == 0 }
}

extension Counts {
    /// Every event counted (each is in exactly one hour bucket).
    var totalEvents: UInt64 { hours.values.reduce(0) { total, table in table.reduce(total) { $0 + $1.1 } } }
}

extension Forward {
    /// Events a forward may carry in any one minute, all its batches together: ten million
    /// installs each counting one event that minute, through one follower.
    public static let maximumEventsPerMinute: UInt64 = 10_000_000

    /// This forward as the primary counts it, held to the bounds a phone's batch is held to
    /// at ingest, or why it is refused whole (nothing counted):
    /// - counts: no tally in the future (past the clock skew) or empty, and at most
    ///   `maximumEventsPerMinute` events in any minute; tallies older than the hour
    ///   retention are dropped, as an event that old is at ingest;
    /// - names through `vocabulary`: a route, precondition or app version longer than
    ///   `maximumNameBytes` refuses the forward, one the vocabulary does not know counts as
    ///   `other` (a revision past the latest as 0), as in a phone's batch;
    /// - shapes normalised and allowed: each is what `LinkShape` makes of it (a shape, not
    ///   raw text) within `maximumShapeBytes`, at most `maximumShapes` distinct ones, and
    ///   their counts add up to no more than the forward's `notFound` `unknownRoute` events
    ///   (every shape is the shape of one such event);
    /// - late minutes by the same rule: each batch is stamped as arriving now, so minutes
    ///   past the lateness window count in their hour only and take new cells only while
    ///   fewer than half the cell cap are held (`Counts.apply`).
    public func held(to limits: TelemetryLimits, vocabulary: Vocabulary, now: Int) -> Result<Forward, ForwardError> {
        let latestMinute = Int32(clamping: (now + limits.maximumClockSkew) / 60)
        let oldestMinute = Int32(clamping: (now - limits.hourRetention) / 60)
        let arrival = Int32(clamping: now / 60)
        var perMinute: [Int32: UInt64] = [:]
        var unknownRoutes: UInt64 = 0, shapeEvents: UInt64 = 0
        var shapes = Set<[UInt8]>()
        var held: [Batch] = []
        func known(_ name: [UInt8], in table: NameTable) -> Bool { name.withUnsafeBufferPointer { table.index(of: $0) } != nil }
        for (index, original) in batches.enumerated() {
            var batch = original
            if let tally = batch.tallies.first(where: { $0.minute > latestMinute || $0.count == 0 }) {
                return .failure(ForwardError("Batch \(index) of the forward has a count of \(tally.count) at minute \(tally.minute), in the future or empty."))
            }
            let names = batch.routes + batch.preconditions + (batch.appVersion.map { [$0] } ?? [])
            if let long = names.first(where: { $0.count > limits.maximumNameBytes }) {
                return .failure(ForwardError("Batch \(index) of the forward names \(long.count) bytes; a name is at most \(limits.maximumNameBytes)."))
            }
            // At most what a follower's batches name (`Counts.namesPerBatch`): past 65,533
            // a slot would not fit 16 bits.
            guard batch.routes.count <= Counts.namesPerBatch, batch.preconditions.count <= Counts.namesPerBatch else {
                return .failure(ForwardError("Batch \(index) of the forward names more than \(Counts.namesPerBatch) routes or preconditions."))
            }
            // Names the vocabulary does not know count as other (slot 1), as at ingest.
            func remap(_ list: [[UInt8]], _ table: NameTable) -> (names: [[UInt8]], slots: [UInt16]) {
                var kept: [[UInt8]] = [], slots: [UInt16] = [0, 1]
                for name in list {
                    if known(name, in: table) {
                        kept.append(name)
                        slots.append(UInt16(kept.count + 1))
                    } else {
                        slots.append(1)
                    }
                }
                return (kept, slots)
            }
            let routes = remap(batch.routes, vocabulary.routes), preconditions = remap(batch.preconditions, vocabulary.preconditions)
            batch.routes = routes.names
            batch.preconditions = preconditions.names
            var tallies: [Tally] = []
            tallies.reserveCapacity(batch.tallies.count)
            for var tally in batch.tallies where tally.minute >= oldestMinute {
                guard Int(tally.route) < routes.slots.count, Int(tally.precondition) < preconditions.slots.count else {
                    return .failure(ForwardError("Batch \(index) of the forward names a route or precondition it does not list."))
                }
                tally.route = routes.slots[Int(tally.route)]
                tally.precondition = preconditions.slots[Int(tally.precondition)]
                perMinute[tally.minute, default: 0] += UInt64(tally.count)
                if tally.outcome == Outcome.notFound.rawValue, tally.reason == FailureReason.unknownRoute.rawValue { unknownRoutes += UInt64(tally.count) }
                tallies.append(tally)
            }
            batch.tallies = tallies
            if let version = batch.appVersion, Int(batch.platform.rawValue) < vocabulary.appVersions.count,
               !known(version, in: vocabulary.appVersions[Int(batch.platform.rawValue)]) {
                batch.appVersion = nil
            }
            if Int(batch.revision) > vocabulary.latestRevision { batch.revision = 0 }
            batch.shapes = batch.shapes.filter { $0.minute >= oldestMinute }
            for shape in batch.shapes {
                guard shape.count > 0, shape.minute <= latestMinute, shape.shape.count <= limits.maximumShapeBytes else {
                    return .failure(ForwardError("Batch \(index) of the forward has a shape that is empty, in the future or longer than \(limits.maximumShapeBytes) bytes."))
                }
                let text = String(decoding: shape.shape, as: UTF8.self)
                guard LinkShape(link: text).description == text else {
                    return .failure(ForwardError("Batch \(index) of the forward has \"\(text.prefix(80))\", which is not a link shape (docs/link-shapes.md)."))
                }
                shapes.insert(shape.shape)
                shapeEvents += UInt64(shape.count)
            }
            batch.id = nil
            batch.acceptedMinute = arrival
            held.append(batch)
        }
        if let (minute, events) = perMinute.first(where: { $0.value > Self.maximumEventsPerMinute }) {
            return .failure(ForwardError("The forward has \(events) events at minute \(minute); at most \(Self.maximumEventsPerMinute) a minute."))
        }
        guard shapes.count <= limits.maximumShapes else {
            return .failure(ForwardError("The forward has \(shapes.count) distinct shapes; at most \(limits.maximumShapes) (what the sketch holds)."))
        }
        guard shapeEvents <= unknownRoutes else {
            return .failure(ForwardError("The forward's shapes count \(shapeEvents) links, more than its \(unknownRoutes) notFound unknownRoute events."))
        }
        return .success(Forward(node: node, through: through, batches: held))
    }
}
