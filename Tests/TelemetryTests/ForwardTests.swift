import SystemIO
import Foundation
import ManifestStore
import RouteEngine
import Synchronization
import Testing
@testable import Telemetry

/// Every count as names (minute and hour buckets alike), so counts interned in another
/// order compare equal.
func canonical(_ counts: Counts) -> [String: UInt64] {
    var out: [String: UInt64] = [:]
    let naming = counts.names
    for (kind, buckets) in [("m", counts.minutes), ("h", counts.hours)] {
        for (bucket, table) in buckets {
            for (key, count) in table {
                let names = TelemetryDimension.allCases.map { "\($0.rawValue)=\(naming.name(of: $0.value(of: key), for: $0))" }
                out["\(kind)\(bucket) " + names.joined(separator: " "), default: 0] += count
            }
        }
    }
    return out
}

func forwardFrom(_ counts: Counts, through: UInt64, node: String = String(repeating: "ab", count: 16)) -> Forward {
    Forward(node: Array(node.utf8), through: through, batches: counts.batches())
}

/// Seals on the store and fails the test if there is nothing to seal.
func seal(_ store: TelemetryStore) throws -> Forward {
    try #require(try store.sealForward())
}

@Suite("Telemetry forwarding")
struct ForwardTests {
    /// Counts with every kind of name: two platforms, a known and an unknown app version,
    /// revisions, preconditions, minutes past retention (in their hour only).
    static func mixedCounts() throws -> Counts {
        var counts = Counts()
        counts.apply(try batch([(0, "proceed", nil, "product"), (-60, "notFound", "expired", "orders"), (-100_000, "notFound", "unknownRoute", nil)]),
                     sequence: 1, now: testNow)
        counts.apply(try batch([(0, "gated", nil, "orders"), (-7_200, "proceed", nil, "nobody-knows-this-route")], platform: "android", appVersion: "9.9.9"),
                     sequence: 2, now: testNow)
        counts.apply(try batch([(-30, "notFound", "malformed", nil)], revision: 3, entry: "push"), sequence: 3, now: testNow)
        return counts
    }

    /// A forward is held to a phone's batch's bounds: an honest one counts as it came;
    /// what a follower can make past a bound is clamped and said (raw text counted as its
    /// shape, shapes past their unknown-route events scaled down, events past a minute's
    /// bound dropped, a minute in the future moved to the latest, names too long or unknown
    /// as other); only what no follower makes is refused whole (a slot its batch does not
    /// list, more names than a batch holds); every batch is stamped as arriving now.
    @Test func aForwardIsHeldToThePhonesBounds() throws {
        let limits = TelemetryLimits()
        var counts = Counts()
        counts.apply(try batch([(0, "proceed", nil, "product"), (-60, "notFound", "unknownRoute", nil)]),
                     sequence: 1, now: testNow)
        let honest = forwardFrom(counts, through: 1)
        var held = honest
        #expect(try held.hold(to: limits, vocabulary: vocabulary, now: testNow).get() == Forward.Clamped())
        var rebuilt = Counts()
        let counted = rebuilt.apply(held, sequence: 1, now: testNow)
        #expect(counted)
        #expect(canonical(rebuilt) == canonical(counts))
        #expect(held.batches.allSatisfy { $0.acceptedMinute == Int32(testNow / 60) && $0.id == nil })

        func holding(_ change: (inout Batch) -> Void) -> (Forward, Forward.Clamped)? {
            var forward = honest
            change(&forward.batches[0])
            guard let clamped = try? forward.hold(to: limits, vocabulary: vocabulary, now: testNow).get() else { return nil }
            return (forward, clamped)
        }
        let minute = Int32(testNow / 60)
        let shape = { (text: String, count: UInt32) in ShapeTally(minute: minute, entry: 0, shape: Array(text.utf8), count: count) }

        let raw = try #require(holding { $0.shapes = [shape("/x0000/<b>call +1 555 0100</b>", 1)] })
        let rawShape = String(decoding: try #require(raw.0.batches[0].shapes.first).shape, as: UTF8.self)
        #expect(rawShape == LinkShape(link: "/x0000/<b>call +1 555 0100</b>").description && !rawShape.contains("<"), "raw text counts as its shape")

        let twice = try #require(holding { $0.shapes = [shape("/deals/:param", 2), shape("/sale/:param", 2)] })
        #expect(twice.0.batches[0].shapes.reduce(0) { $0 + $1.count } <= 1 && twice.1.shapeCounts >= 3, "shapes scaled to the one unknown-route event")
        // A seal between a landing flush's tallies and its shapes (two log entries): the shapes
        // alone in a forward are counted as nothing, the forward is not refused.
        var shapesAlone = Batch()
        shapesAlone.shapes = [shape("/deals/:param", 3)]
        var split = Forward(node: honest.node, through: 2, batches: [shapesAlone])
        let splitClamped = try split.hold(to: limits, vocabulary: vocabulary, now: testNow).get()
        #expect(splitClamped.shapeCounts == 3 && split.batches[0].shapes.isEmpty)
        let once = try #require(holding { $0.shapes = [shape("/deals/:param", 1)] })
        #expect(once.1 == Forward.Clamped() && once.0.batches[0].shapes.map(\.count) == [1])

        let many = try #require(holding { batch in
            batch.tallies[0].count = UInt32(Forward.maximumEventsPerMinute) + 5
            batch.tallies.append(Tally(minute: batch.tallies[0].minute, entry: 0, outcome: 0, reason: 0, route: 0, precondition: 0, count: 3))
        })
        #expect(many.1.events == 8, "past the events a minute may hold")
        let minuteTotal = many.0.batches.flatMap(\.tallies).filter { $0.minute == honest.batches[0].tallies[0].minute }.reduce(0) { $0 + UInt64($1.count) }
        #expect(minuteTotal == Forward.maximumEventsPerMinute)

        // An hour past the minute retention holds 60 minutes' worth on its first minute.
        let oldMinute = Int32((testNow - limits.minuteRetention) / 60) - 600
        let old = try #require(holding { batch in
            batch.tallies.append(Tally(minute: oldMinute, entry: 0, outcome: 0, reason: 0, route: 0, precondition: 0, count: 500_000_000))
        })
        #expect(old.1.events == 0, "an old hour's first minute carries the hour")

        let ahead = try #require(holding { $0.tallies[0].minute = minute + 10 })
        #expect(ahead.1.moved == 1 && ahead.0.batches[0].tallies.allSatisfy { $0.minute <= Int32((testNow + limits.maximumClockSkew) / 60) })

        let long = try #require(holding { $0.routes = [Array(repeating: 0x61, count: limits.maximumNameBytes + 1)] })
        #expect(long.0.batches[0].routes.isEmpty, "a name too long is no name the vocabulary knows")

        #expect(holding { $0.tallies[0].route = 40 } == nil, "a slot it does not list")

        // 65,535 names the vocabulary knows (the same one again): refused, not a slot past 16 bits.
        var repeated = honest
        repeated.batches[0].routes = Array(repeating: Array("product".utf8), count: Int(UInt16.max))
        #expect((try? repeated.hold(to: limits, vocabulary: vocabulary, now: testNow).get()) == nil)

        // Names the vocabulary does not know are other, in a batch of their own names.
        var unknown = honest
        unknown.batches[0].routes = [Array("made-up".utf8)] + unknown.batches[0].routes
        unknown.batches[0].tallies = unknown.batches[0].tallies.map { var tally = $0; if tally.route >= 2 { tally.route += 1 }; return tally }
        unknown.batches[0].tallies.append(Tally(minute: minute, entry: 0, outcome: 0, reason: 0, route: 2, precondition: 0, count: 5))
        _ = try unknown.hold(to: limits, vocabulary: vocabulary, now: testNow).get()
        #expect(unknown.batches[0].routes == [Array("product".utf8)])
        #expect(unknown.batches[0].tallies.last?.route == 1, "made-up counts as other")
    }

    /// Of more distinct shapes than the sketch holds, those with the highest counts are kept.
    /// What no follower makes is refused while it is read, before it costs more than its
    /// bytes: a forward inside a forward (no sender chooses how deep a decode recurses), a
    /// batch naming more routes than it has tallies, more shapes than a follower's sketch
    /// sends. A forward's log frame is the size `Frame.payloadSize` says (what `hold`
    /// checks against `Frame.maximumPayload`).
    @Test func aForwardIsRefusedWhileReadWhenNoFollowerMadeIt() throws {
        var counts = Counts()
        counts.apply(try batch([(0, "proceed", nil, "product"), (0, "notFound", "unknownRoute", nil)]), sequence: 1, now: testNow)
        let honest = forwardFrom(counts, through: 1)
        var frame: [UInt8] = []
        Frame.encode(honest, sequence: 7, into: &frame)
        #expect(frame.count == Frame.headerSize + Frame.payloadSize(honest))
        for batch in honest.batches {
            var out: [UInt8] = []
            Frame.encode(batch, sequence: 1, into: &out)
            #expect(out.count == Frame.headerSize + Frame.payloadSize(batch))
        }
        func wrap(_ frames: [UInt8], count: UInt32) -> [UInt8] {
            var writer = ByteWriter()
            writer.bytes.append(contentsOf: Forward.magic)
            writer.name(honest.node)
            writer.u64(2)
            writer.u32(count)
            writer.bytes.append(contentsOf: frames)
            writer.u32(writer.bytes.withUnsafeBytes(CRC32C.checksum))
            return writer.bytes
        }
        #expect(throws: Never.self) { try Forward.decode(wrap(Array(honest.encoded.dropFirst(8 + 2 + 32 + 8 + 4).dropLast(4)), count: UInt32(honest.batches.count))).get() }
        // Forwards nested 300 deep, each level a forward's frame: refused at the first level.
        var nested = honest.encoded
        for _ in 0..<300 {
            var payload = ByteWriter()
            payload.u64(0)
            payload.u8(Frame.forwardMarker)
            payload.bytes.append(contentsOf: nested)
            var framed = ByteWriter()
            framed.u32(UInt32(payload.bytes.count))
            framed.u32(payload.bytes.withUnsafeBytes(CRC32C.checksum))
            nested = wrap(framed.bytes + payload.bytes, count: 1)
        }
        #expect(throws: ForwardError.self) { try Forward.decode(nested).get() }

        var named = honest
        named.batches[0].routes += (0..<50).map { Array("route-\($0)".utf8) }
        #expect(throws: ForwardError.self) { try Forward.decode(named.encoded).get() }

        let minute = Int32(testNow / 60)
        func shapes(_ count: Int) -> Forward {
            var forward = honest
            forward.batches[0].shapes = (0..<count).map { ShapeTally(minute: minute, entry: 0, shape: Array("/s\($0)".utf8), count: 1) }
            return forward
        }
        #expect(throws: Never.self) { try Forward.decode(shapes(Forward.shapesPerForward).encoded).get() }
        #expect(throws: ForwardError.self) { try Forward.decode(shapes(Forward.shapesPerForward + 1).encoded).get() }
    }

    /// Shape counts scaled to the unknown-route events by largest remainder (999 events, a
    /// thousand shapes of one link each: 999 links kept, not none); a claimed source and an
    /// empty shape are not taken from a forward.
    @Test func shapesAreScaledByLargestRemainderAndCarryNoClaimedSource() throws {
        var counts = Counts()
        counts.apply(try batch([(0, "notFound", "unknownRoute", nil)]), sequence: 1, now: testNow)
        var forward = forwardFrom(counts, through: 1)
        let minute = Int32(testNow / 60)
        forward.batches[0].tallies[0].count = 999
        forward.batches[0].shapes = (0..<1_000).map { ShapeTally(minute: minute, entry: 0, shape: Array("/deals/x\($0)".utf8), count: 1, source: 77) }
            + [ShapeTally(minute: minute, entry: 0, shape: [], count: 5, source: 78)]
        let clamped = try forward.hold(to: TelemetryLimits(), vocabulary: vocabulary, now: testNow).get()
        let kept = forward.batches.flatMap(\.shapes)
        #expect(kept.reduce(0) { $0 + UInt64($1.count) } == 999 && clamped.shapeCounts == 6)
        #expect(kept.allSatisfy { $0.source == 0 && !$0.shape.isEmpty })
    }

    @Test func aForwardKeepsTheShapesTheSketchHolds() throws {
        var limits = TelemetryLimits()
        limits.maximumShapes = 3
        let minute = Int32(testNow / 60)
        var batch = Batch()
        batch.tallies = [Tally(minute: minute, entry: 0, outcome: Outcome.notFound.rawValue, reason: FailureReason.unknownRoute.rawValue,
                               route: 0, precondition: 0, count: 1_000)]
        batch.shapes = (1...6).map { ShapeTally(minute: minute, entry: 0, shape: Array("/s\($0)/:param".utf8), count: UInt32($0 * 10)) }
        var forward = Forward(node: Array(String(repeating: "ab", count: 16).utf8), through: 1, batches: [batch])
        let clamped = try forward.hold(to: limits, vocabulary: vocabulary, now: testNow).get()
        #expect(Set(forward.batches[0].shapes.map { String(decoding: $0.shape, as: UTF8.self) }).count <= 3)
        #expect(forward.batches[0].shapes.map(\.count).sorted() == [40, 50, 60])
        #expect(clamped.shapeCounts == 60)
    }

    @Test func batchesRebuildTheCountsTheyCameFrom() throws {
        let counts = try Self.mixedCounts()
        var rebuilt = Counts()
        for batch in counts.batches() { rebuilt.apply(batch, sequence: 9, now: testNow) }
        #expect(!canonical(counts).isEmpty)
        #expect(canonical(rebuilt) == canonical(counts))
        #expect(rebuilt.totalEvents == counts.totalEvents)
        #expect(Counts().batches().isEmpty)
    }

    @Test func aCountPastThirtyTwoBitsIsSplitAcrossTallies() throws {
        var counts = Counts()
        let one = try batch([(0, "proceed", nil, "product")])
        counts.apply(one, sequence: 1, now: testNow)
        let key = try #require(counts.hours.values.first.flatMap { table in table.first { _ in true }?.0 })
        counts.hours[Counts.hour(ofMinute: Int32(testNow / 60))]!.add(key, UInt64(UInt32.max) + 10)
        counts.minutes[Int32(testNow / 60)]!.add(key, UInt64(UInt32.max) + 10)
        var rebuilt = Counts()
        for batch in counts.batches() { rebuilt.apply(batch, sequence: 2, now: testNow) }
        #expect(canonical(rebuilt) == canonical(counts))
    }

    @Test func aForwardRoundTripsAndDamageIsRefused() throws {
        let forward = forwardFrom(try Self.mixedCounts(), through: 17)
        let bytes = forward.encoded
        let decoded = try Forward.decode(bytes).get()
        #expect(decoded.node == forward.node)
        #expect(decoded.through == 17)
        #expect(decoded.events == forward.events)
        var rebuilt = Counts()
        for batch in decoded.batches { rebuilt.apply(batch, sequence: 1, now: testNow) }
        #expect(canonical(rebuilt) == canonical(try Self.mixedCounts()))
        for index in [0, 9, 45, bytes.count / 2, bytes.count - 1] {
            var damaged = bytes
            damaged[index] ^= 0x20
            #expect((try? Forward.decode(damaged).get()) == nil, "flipped byte \(index)")
        }
        for cut in [0, 7, 12, bytes.count - 5, bytes.count - 1] {
            #expect((try? Forward.decode(Array(bytes[0..<cut])).get()) == nil, "cut at \(cut)")
        }
        let badNode = Forward(node: Array("not-hex".utf8), through: 1, batches: []).encoded
        #expect(throws: ForwardError.self) { try Forward.decode(badNode).get() }
        let zero = Forward(node: forward.node, through: 0, batches: []).encoded
        #expect(throws: ForwardError.self) { try Forward.decode(zero).get() }
    }

    @Test func aForwardCountsOncePerNodeAndThrough() throws {
        let source = try Self.mixedCounts()
        var counts = Counts()
        let first = counts.apply(forwardFrom(source, through: 5), sequence: 1, now: testNow)
        #expect(first)
        let once = canonical(counts)
        let retry = counts.apply(forwardFrom(source, through: 5), sequence: 2, now: testNow)
        #expect(!retry, "a retry")
        let older = counts.apply(forwardFrom(source, through: 4), sequence: 3, now: testNow)
        #expect(!older, "an older one")
        #expect(canonical(counts) == once)
        let other = counts.apply(forwardFrom(source, through: 5, node: String(repeating: "cd", count: 16)), sequence: 4, now: testNow)
        #expect(other, "another node")
        let next = counts.apply(forwardFrom(source, through: 6), sequence: 5, now: testNow)
        #expect(next, "the next one")
        #expect(counts.totalEvents == 3 * source.totalEvents)
        #expect(counts.lastSequence == 5)
    }

    @Test func theSnapshotKeepsForwardsAndOutgoingCountsAndReadsTheFirstFormat() throws {
        var counts = try Self.mixedCounts()
        counts.apply(forwardFrom(try Self.mixedCounts(), through: 8), sequence: 4, now: testNow)
        let outgoing = Outgoing(pending: try Self.mixedCounts(), after: 2)
        let bytes = SnapshotCodec.encode(counts, outgoing: outgoing)
        let restored = try #require(bytes.withUnsafeBytes { SnapshotCodec.decodeWithOutgoing($0, limits: TelemetryLimits()) })
        #expect(restored.counts.forwarded == counts.forwarded)
        #expect(canonical(restored.counts) == canonical(counts))
        #expect(restored.outgoing?.after == 2)
        #expect(canonical(try #require(restored.outgoing).pending) == canonical(outgoing.pending))
        // WMTSNAP1, as stores written before forwarding hold it: the same body, no extras,
        // its keys in layout 1 (before platform `other` and entry `web`).
        let plain = SnapshotCodec.encode(Self.inLayout1(try Self.mixedCounts()), withShapes: false)
        var first = Array("WMTSNAP1".utf8) + plain[8..<(plain.count - 4 - 5)]
        first += withUnsafeBytes(of: first.withUnsafeBytes(CRC32C.checksum).littleEndian, Array.init)
        let old = try #require(first.withUnsafeBytes { SnapshotCodec.decodeWithOutgoing($0, limits: TelemetryLimits()) })
        #expect(canonical(old.counts) == canonical(try Self.mixedCounts()))
        #expect(old.outgoing == nil)
        // WMTSNAP2: forwards and outgoing counts, keys still in layout 1.
        var second = Array("WMTSNAP2".utf8) + SnapshotCodec.encode(Self.inLayout1(counts), outgoing: Outgoing(pending: Self.inLayout1(outgoing.pending), after: 2), withShapes: false).dropFirst(8).dropLast(4)
        second += withUnsafeBytes(of: second.withUnsafeBytes(CRC32C.checksum).littleEndian, Array.init)
        let secondRestored = try #require(second.withUnsafeBytes { SnapshotCodec.decodeWithOutgoing($0, limits: TelemetryLimits()) })
        #expect(canonical(secondRestored.counts) == canonical(counts))
        #expect(canonical(try #require(secondRestored.outgoing).pending) == canonical(outgoing.pending))
    }

    @Test func theSnapshotKeepsWebLandingsFromOtherPlatforms() throws {
        var counts = Counts()
        var landing = Batch()
        landing.platform = .other
        landing.routes = [Array("spring-sale".utf8)]
        landing.tallies = [Tally(minute: Int32(testNow / 60), entry: EntryPoint.web.rawValue, outcome: Outcome.notFound.rawValue,
                                 reason: FailureReason.expired.rawValue, route: 2, precondition: 0, count: 3)]
        counts.apply(landing, sequence: 1, now: testNow)
        let bytes = SnapshotCodec.encode(counts)
        let restored = try #require(bytes.withUnsafeBytes { SnapshotCodec.decode($0, limits: TelemetryLimits()) })
        #expect(canonical(restored) == canonical(counts))
        let key = try #require(restored.hours.values.first?.first(where: { _ in true })?.0)
        #expect(TelemetryDimension.platform.value(of: key) == UInt64(Platform.other.rawValue))
        #expect(TelemetryDimension.entry.value(of: key) == UInt64(EntryPoint.web.rawValue))
        #expect(TelemetryDimension.reason.value(of: key) == UInt64(FailureReason.expired.rawValue))
    }

    /// `counts` with every key packed as snapshots `WMTSNAP1` and `2` held them.
    static func inLayout1(_ counts: Counts) -> Counts {
        func layout1(_ key: UInt64) -> UInt64 {
            func value(_ dimension: TelemetryDimension) -> UInt64 { dimension.value(of: key) }
            return value(.platform) | value(.entry) << 1 | value(.outcome) << 3 | value(.reason) << 5 | value(.precondition) << 8
                | value(.appVersion) << 14 | value(.revision) << 26 | value(.route) << 46
        }
        var old = counts
        for path in [\Counts.minutes, \Counts.hours] as [WritableKeyPath<Counts, [Int32: CountTable]>] {
            old[keyPath: path] = old[keyPath: path].mapValues { table in
                var converted = CountTable()
                for (key, count) in table { converted.add(layout1(key), count) }
                return converted
            }
        }
        return old
    }
}

@Suite("Telemetry forwarding, durably", .serialized)
struct ForwardingStoreTests {
    func open(_ scratch: TelemetryScratch, compactionBytes: Int = 64 << 20) throws -> TelemetryStore {
        var options = TelemetryStore.Options()
        options.compactionBytes = compactionBytes
        options.clock = { testNow }
        options.forwarding = true
        return try TelemetryStore(directory: DataDirectory(path: scratch.path, subdirectories: [], exclusive: false), options: options)
    }

    @Test func whatWasCountedBeforeFollowingIsNeverForwarded() throws {
        let scratch = TelemetryScratch()
        let standalone = try scratch.open()
        try commit(batch([(0, "proceed", nil, "product")]), to: standalone).get()
        standalone.close()
        let follower = try open(scratch)
        #expect(follower.node?.utf8.count == 32)
        #expect(try follower.sealForward() == nil)
        try commit(batch([(0, "notFound", "expired", "orders")]), to: follower).get()
        let forward = try seal(follower)
        #expect(forward.events == 1)
        follower.close()
    }

    @Test func aSealedForwardIsKeptUntilAcknowledgedAcrossRestarts() throws {
        let scratch = TelemetryScratch()
        var store: TelemetryStore? = try open(scratch)
        _ = try store!.sealForward()  // makes the node
        let node = try #require(store!.node)
        try commit(batch([(0, "proceed", nil, "product"), (-60, "notFound", "expired", "orders")]), to: store!).get()
        let first = try seal(store!)
        #expect(first.events == 2)
        try commit(batch([(0, "gated", nil, "orders")]), to: store!).get()
        #expect(store!.eventsNotForwarded == 3)
        // Sealing again before the acknowledgement gives the same forward.
        #expect(try seal(store!).through == first.through)
        store!.close()

        // A crash before the acknowledgement: the same forward again, and only the later batch pending.
        store = try open(scratch)
        #expect(store!.node == node)
        let again = try #require(store!.unacknowledgedForward)
        #expect(again.through == first.through)
        #expect(again.encoded == first.encoded)
        #expect(store!.eventsNotForwarded == 3)
        try store!.acknowledgeForward(again)
        #expect(store!.unacknowledgedForward == nil)
        let second = try seal(store!)
        #expect(second.events == 1)
        #expect(second.through > first.through)
        store!.close()

        // After the acknowledgement the first never comes back; the second is still due.
        store = try open(scratch)
        #expect(store!.unacknowledgedForward?.through == second.through)
        try store!.acknowledgeForward(second)
        #expect(try store!.sealForward() == nil)
        #expect(store!.eventsNotForwarded == 0)
        store!.close()
        store = try open(scratch)
        #expect(try store!.sealForward() == nil)
        store!.close()
    }

    @Test func compactionsKeepWhatIsPendingExactlyOnce() throws {
        let scratch = TelemetryScratch()
        var store = try open(scratch, compactionBytes: 1)  // a snapshot after every commit
        var sent: UInt64 = 0
        var expected: UInt64 = 0
        for round in 0..<6 {
            try commit(batch([(0, "proceed", nil, "product"), (-60 * round, "notFound", "expired", "orders")]), to: store).get()
            expected += 2
            if round % 2 == 0 {
                let forward = try seal(store)
                try commit(batch([(0, "gated", nil, "orders")]), to: store).get()  // after the seal: pending
                expected += 1
                if round % 4 == 0 { try store.acknowledgeForward(forward); sent += forward.events }
            }
            store.close()
            store = try open(scratch, compactionBytes: 1)
        }
        while let forward = try store.sealForward() {
            try store.acknowledgeForward(forward)
            sent += forward.events
        }
        #expect(sent == expected)
        store.close()
    }

    @Test func aPrimaryCountsEachForwardOnceAndRemembersItThroughCompaction() throws {
        let scratch = TelemetryScratch()
        var primary = try scratch.open(compactionBytes: 1)
        let forward = forwardFrom(try ForwardTests.mixedCounts(), through: 3)
        func submit(_ forward: Forward, to store: TelemetryStore) throws {
            try waitForCompletion { store.submit(forward, completion: $0) }.get()
        }
        try submit(forward, to: primary)
        try submit(forward, to: primary)
        #expect(primary.currentStatistics.forwardsApplied == 1)
        #expect(primary.currentStatistics.forwardsRepeated == 1)
        let once = primary.read { canonical($0) }
        #expect(once == canonical(try ForwardTests.mixedCounts()))
        primary.close()
        primary = try scratch.open(compactionBytes: 1)
        try submit(forward, to: primary)
        #expect(primary.read { canonical($0) } == once)
        primary.close()
        // Replayed from the log rather than the snapshot: the same.
        primary = try scratch.open()
        try submit(forward, to: primary)
        #expect(primary.read { canonical($0) } == once)
        primary.close()
    }
}
