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

    /// The most shapes a forward as made carries: a follower sends its sketch's shapes
    /// (`TelemetryLimits.maximumShapes`, 1,000), a shape split only past 2^32 links. Checked
    /// before any is read, so a forward's shapes cost at most this many.
    static let shapesPerForward = 10_000

    /// The largest body a primary takes (`POST /v1/replication/telemetry`): a megabyte
    /// below a log frame's most, so what holding adds (5 bytes a batch, 4 a shape) fits.
    public static let maximumBytes = Frame.maximumPayload - (1 << 20)

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

    /// Reads and checks an encoded forward as a follower makes it (a body, an outbox); the
    /// error says what is wrong, for a `400`.
    public static func decode(_ bytes: [UInt8]) -> Result<Forward, ForwardError> {
        bytes.withUnsafeBytes { decode($0, asMade: true) }
    }

    /// `asMade`: held to what `Counts.batches` makes (no more names than tallies in a
    /// batch); a forward in the log was held (`hold`) and may have lost tallies since.
    static func decode(_ bytes: UnsafeRawBufferPointer, asMade: Bool = false) -> Result<Forward, ForwardError> {
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
        var shapesLeft = asMade ? shapesPerForward : .max
        for index in 0..<Int(count) {
            guard let length = reader.u32().map(Int.init), let crc = reader.u32(), length <= Frame.maximumPayload, reader.remaining >= length else {
                return .failure(ForwardError("Batch \(index) of the forward is cut short."))
            }
            let payload = UnsafeRawBufferPointer(rebasing: body[reader.offset..<reader.offset + length])
            guard CRC32C.checksum(payload) == crc, let (_, batch) = Frame.decodeBatch(payload, maximumShapes: shapesLeft) else {
                return .failure(ForwardError("Batch \(index) of the forward is damaged, not a batch, or past \(shapesPerForward) shapes in all."))
            }
            shapesLeft -= batch.shapes.count
            // What a follower makes (`Counts.batches`) names only the routes and
            // preconditions its tallies count: more names than tallies is no follower's, and
            // would let a forward cost many times its bytes in names.
            guard !asMade || (batch.routes.count <= batch.tallies.count && batch.preconditions.count <= batch.tallies.count) else {
                return .failure(ForwardError("Batch \(index) of the forward names more routes or preconditions than it has tallies."))
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
    /// installs each counting one event that minute, through one follower. A minute past the
    /// minute retention counts in its hour only, and its hour may carry 60 times as many
    /// (what a follower puts on an hour's first minute when its minutes have aged out).
    public static let maximumEventsPerMinute: UInt64 = 10_000_000

    /// What holding a forward to the bounds took out of it; nothing for a forward a
    /// follower made of what it was sent, within the bounds.
    public struct Clamped: Sendable, Equatable {
        /// Events past a minute's (or an old hour's) bound, not counted.
        public var events: UInt64 = 0
        /// Shape counts not counted: past the forward's unknown-route events, past the
        /// shapes the sketch holds, longer than a shape may be, or empty.
        public var shapeCounts: UInt64 = 0
        /// Tallies and shapes from a minute past the clock skew, counted in the latest
        /// minute the clock allows instead.
        public var moved: UInt64 = 0

        public var isEmpty: Bool { events == 0 && shapeCounts == 0 && moved == 0 }
    }

    /// Holds this forward, in place, to the bounds a phone's batch is held to at ingest, or
    /// says why it is refused whole (nothing counted). Refused is only what no follower
    /// makes, so that an honest follower's forward — retried until it is counted — is never
    /// refused for good: a damaged batch, one naming more than `Counts.namesPerBatch`
    /// routes or preconditions, a tally naming a slot its batch does not list. Everything
    /// else a follower can make past a bound (of what its phones sent, or of a clock ahead
    /// of this one) is clamped and said in the answer (`Clamped`):
    /// - counts: empty tallies dropped; at most `maximumEventsPerMinute` events in any
    ///   minute, 60 times that in an hour past the minute retention, the rest dropped (the
    ///   first tallies in the forward's order are kept); a minute past the clock skew
    ///   counts as the latest minute it allows; tallies older than the hour retention are
    ///   dropped, as an event that old is at ingest;
    /// - names through `vocabulary`: a route, precondition or app version the vocabulary
    ///   does not know counts as `other` (a revision past the latest as 0), as in a phone's
    ///   batch;
    /// - shapes normalised and allowed: of the distinct shapes sent, the `maximumShapes`
    ///   with the highest counts are kept (the rest dropped before anything is normalised),
    ///   each counted as what `LinkShape` makes of it (a shape, not raw text); shapes longer
    ///   than `maximumShapeBytes` or empty are dropped; and if they count more links than
    ///   the forward's `notFound` `unknownRoute` events (every shape is the shape of one
    ///   such event), the counts are scaled down to fit, by largest remainder; a shape's
    ///   claimed source is dropped (0: not known), as one token's word is one source;
    /// - late minutes by the same rule: each batch is stamped as arriving now, so minutes
    ///   past the lateness window count in their hour only and take new cells only while
    ///   fewer than half the cell cap are held (`Counts.apply`).
    ///
    /// Held, it is written to the log as one frame: one that would not fit
    /// `Frame.maximumPayload` (held batches carry their minute of arrival, shapes their
    /// source) is refused, as a replay would read a frame past it as damage. No follower
    /// makes one: the body is at most `Forward.maximumBytes`, well below it.
    ///
    /// Work and memory are linear in the forward: batches are changed where they are (a
    /// forward held by its only owner is not copied), and shapes are normalised only once
    /// the kept ones are chosen.
    public mutating func hold(to limits: TelemetryLimits, vocabulary: Vocabulary, now: Int) -> Result<Clamped, ForwardError> {
        /// Held, it must fit one log frame.
        func held(_ clamped: Clamped) -> Result<Clamped, ForwardError> {
            guard Frame.payloadSize(self) <= Frame.maximumPayload else {
                return .failure(ForwardError("The forward, held, would be more than one log frame holds (\(Frame.maximumPayload) bytes); forward less at a time."))
            }
            return .success(clamped)
        }
        let latestMinute = Int32(clamping: (now + limits.maximumClockSkew) / 60)
        let oldestMinute = Int32(clamping: (now - limits.hourRetention) / 60)
        let oldestKeptMinute = Int32(clamping: (now - limits.minuteRetention) / 60)
        let arrival = Int32(clamping: now / 60)
        var clamped = Clamped()
        func known(_ name: [UInt8], in table: NameTable) -> Bool { name.withUnsafeBufferPointer { table.index(of: $0) } != nil }
        /// A minute's bucket for the events bound: the minute, or its hour (as a negative
        /// number) past the minute retention.
        func bucket(_ minute: Int32) -> Int64 { minute >= oldestKeptMinute ? Int64(minute) : -1 - Int64(Counts.hour(ofMinute: minute)) }
        var perBucket: [Int64: UInt64] = [:]
        var shapeTotals: [[UInt8]: UInt64] = [:]
        for index in batches.indices {
            // At most what a follower's batches name (`Counts.namesPerBatch`): past 65,533
            // a slot would not fit 16 bits.
            guard batches[index].routes.count <= Counts.namesPerBatch, batches[index].preconditions.count <= Counts.namesPerBatch else {
                return .failure(ForwardError("Batch \(index) of the forward names more than \(Counts.namesPerBatch) routes or preconditions."))
            }
            // Names the vocabulary does not know count as other (slot 1), as at ingest.
            func remap(_ list: inout [[UInt8]], _ table: NameTable) -> [UInt16] {
                var slots: [UInt16] = [0, 1], kept = 0
                for position in list.indices {
                    if known(list[position], in: table) {
                        list.swapAt(kept, position)
                        kept += 1
                        slots.append(UInt16(kept + 1))
                    } else {
                        slots.append(1)
                    }
                }
                list.removeSubrange(kept...)
                return slots
            }
            let routeSlots = remap(&batches[index].routes, vocabulary.routes)
            let preconditionSlots = remap(&batches[index].preconditions, vocabulary.preconditions)
            for position in batches[index].tallies.indices {
                let tally = batches[index].tallies[position]
                guard Int(tally.route) < routeSlots.count, Int(tally.precondition) < preconditionSlots.count else {
                    return .failure(ForwardError("Batch \(index) of the forward names a route or precondition it does not list."))
                }
                batches[index].tallies[position].route = routeSlots[Int(tally.route)]
                batches[index].tallies[position].precondition = preconditionSlots[Int(tally.precondition)]
                if tally.minute > latestMinute {
                    batches[index].tallies[position].minute = latestMinute
                    clamped.moved += 1
                }
            }
            batches[index].tallies.removeAll { $0.count == 0 || $0.minute < oldestMinute }
            for tally in batches[index].tallies { perBucket[bucket(tally.minute), default: 0] += UInt64(tally.count) }
            if let version = batches[index].appVersion, Int(batches[index].platform.rawValue) < vocabulary.appVersions.count,
               !known(version, in: vocabulary.appVersions[Int(batches[index].platform.rawValue)]) {
                batches[index].appVersion = nil
            }
            if Int(batches[index].revision) > vocabulary.latestRevision { batches[index].revision = 0 }
            batches[index].shapes.removeAll { shape in
                let dropped = shape.count == 0 || shape.shape.isEmpty || shape.minute < oldestMinute || shape.shape.count > limits.maximumShapeBytes
                if dropped { clamped.shapeCounts += UInt64(shape.count) }
                return dropped
            }
            for position in batches[index].shapes.indices where batches[index].shapes[position].minute > latestMinute {
                batches[index].shapes[position].minute = latestMinute
                clamped.moved += 1
            }
            for shape in batches[index].shapes { shapeTotals[shape.shape, default: 0] += UInt64(shape.count) }
            batches[index].id = nil
            batches[index].acceptedMinute = arrival
        }

        // Events past a bucket's bound: the first tallies keep what the bucket allows.
        func bound(_ bucket: Int64) -> UInt64 { bucket < 0 ? 60 * Self.maximumEventsPerMinute : Self.maximumEventsPerMinute }
        var left = perBucket.filter { $0.value > bound($0.key) }
        if !left.isEmpty {
            for key in left.keys { left[key] = bound(key) }
            for index in batches.indices {
                for position in batches[index].tallies.indices {
                    let key = bucket(batches[index].tallies[position].minute)
                    guard let allowed = left[key] else { continue }
                    let count = UInt64(batches[index].tallies[position].count), kept = min(count, allowed)
                    left[key] = allowed - kept
                    clamped.events += count - kept
                    batches[index].tallies[position].count = UInt32(kept)
                }
                batches[index].tallies.removeAll { $0.count == 0 }
            }
        }
        var unknownRoutes: UInt64 = 0
        for batch in batches {
            for tally in batch.tallies where tally.outcome == Outcome.notFound.rawValue && tally.reason == FailureReason.unknownRoute.rawValue {
                unknownRoutes += UInt64(tally.count)
            }
        }

        // Shapes: the sketch's worth with the highest counts, then normalised.
        guard !shapeTotals.isEmpty else { return held(clamped) }
        var kept: [[UInt8]: [UInt8]] = [:]  // as sent → as LinkShape makes it
        let ranked = shapeTotals.count <= limits.maximumShapes ? Array(shapeTotals.keys)
            : shapeTotals.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key.lexicographicallyPrecedes($1.key) }
                .prefix(limits.maximumShapes).map(\.key)
        for sent in ranked { kept[sent] = Array(LinkShape(link: String(decoding: sent, as: UTF8.self)).description.utf8) }
        let keptEvents = ranked.reduce(UInt64(0)) { $0 + shapeTotals[$1]! }
        clamped.shapeCounts += shapeTotals.values.reduce(0, +) - keptEvents
        // Scaled down to the unknown-route events, by largest remainder: each count rounded
        // down, then one more to the counts whose remainders are largest until the scaled
        // total is reached (a count of 1 in a scale of 0.999 is not lost to rounding).
        var scaled: [(batch: Int, position: Int, count: UInt32, remainder: Double)] = []
        for index in batches.indices {
            for (position, shape) in batches[index].shapes.enumerated() where kept[shape.shape] != nil {
                let exact = keptEvents > unknownRoutes ? Double(shape.count) * Double(unknownRoutes) / Double(keptEvents) : Double(shape.count)
                let whole = min(exact.rounded(.down), Double(shape.count))
                scaled.append((index, position, UInt32(whole), exact - whole))
            }
        }
        if keptEvents > unknownRoutes {
            var short = unknownRoutes - min(unknownRoutes, scaled.reduce(UInt64(0)) { $0 + UInt64($1.count) })
            for place in scaled.indices.sorted(by: { scaled[$0].remainder > scaled[$1].remainder }) where short > 0 {
                let shape = batches[scaled[place].batch].shapes[scaled[place].position]
                guard scaled[place].count < shape.count else { continue }
                scaled[place].count += 1
                short -= 1
            }
        }
        var counts = batches.map { [UInt32?](repeating: nil, count: $0.shapes.count) }
        for entry in scaled { counts[entry.batch][entry.position] = entry.count }
        for index in batches.indices {
            var shapes: [ShapeTally] = []
            for (position, var shape) in batches[index].shapes.enumerated() {
                guard let normalised = kept[shape.shape], let count = counts[index][position] else { continue }
                clamped.shapeCounts += UInt64(shape.count - count)
                guard count > 0 else { continue }
                shape.shape = normalised
                shape.count = count
                // Who a shape came from is the follower's to know, not the forward's to say:
                // a source claimed in a forward would let one token make a shape look
                // followed by many (the suggestions' evidence), so none is taken from it.
                shape.source = 0
                shapes.append(shape)
            }
            batches[index].shapes = shapes
        }
        return held(clamped)
    }
}
