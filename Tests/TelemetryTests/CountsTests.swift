import CivilDate
import Foundation
import TestSupport
import Testing
@testable import Telemetry

/// A batch of events given as (seconds after `testNow`, outcome, reason, route).
func batch(_ events: [(Int, String, String?, String?)], platform: String = "ios", appVersion: String = "5.3.0", revision: Int = 7,
           entry: String = "universalLink", vocabulary: Vocabulary = vocabulary) throws -> Batch {
    let items = events.map { offset, outcome, reason, route in
        var fields = [#""ts": "\#(Timestamp.format(testNow + offset))""#, #""entry": "\#(entry)""#, #""outcome": "\#(outcome)""#]
        if let reason { fields.append(#""reason": "\#(reason)""#) }
        if let route { fields.append(#""route": "\#(route)""#) }
        return "{" + fields.joined(separator: ", ") + "}"
    }
    let client = #"{"platform": "\#(platform)", "appVersion": "\#(appVersion)", "revision": \#(revision)}"#
    return try BatchParser(vocabulary: vocabulary).parse(Array(batchBody(items, client: client).utf8), now: testNow)
}

/// Pruning takes the dropped buckets' cells off the tallies rather than counting every cell
/// again: both must agree with a count from scratch.
func expectTalliesAsRecounted(_ counts: Counts, sourceLocation: SourceLocation = #_sourceLocation) {
    var recounted = counts
    recounted.recountCells()
    #expect(counts.cells == recounted.cells, "cells", sourceLocation: sourceLocation)
    #expect(counts.namedCells == recounted.namedCells, "named cells", sourceLocation: sourceLocation)
}

func lastHour(step: Step = .minute) -> CountQuery {
    CountQuery(from: testNow - 3_600, to: testNow + 60, step: step)
}

@Suite("Telemetry counts")
struct CountsTests {
    @Test func bucketsByMinuteAndHour() throws {
        var counts = Counts()
        // Out of time order, as a client's clock may step back.
        counts.apply(try batch([(-3_000, "proceed", nil, "product"), (0, "notFound", "unknownRoute", nil), (-2_990, "proceed", nil, "product")]),
                     sequence: 1, now: testNow)
        let minutes = counts.query(lastHour())
        #expect(minutes.total == 3)
        #expect(minutes.failures == 1)
        #expect(minutes.bucketStarts.count == 61)
        let perBucket = Dictionary(uniqueKeysWithValues: zip(minutes.bucketStarts, minutes.groups[0].counts).filter { $0.1 > 0 })
        #expect(perBucket == [testNow - 3_000: 2, testNow: 1])
        var hours = lastHour(step: .hour)
        hours.from = testNow - 7_200
        let hourly = counts.query(hours)
        #expect(hourly.total == 3)
        #expect(hourly.groups[0].counts.filter { $0 > 0 } == [2, 1], "11:10 and 12:00 fall in two hours")
    }

    @Test func groupsFiltersAndRanks() throws {
        var counts = Counts()
        counts.apply(try batch([(0, "proceed", nil, "product"), (0, "notFound", "validationFailed", "product"),
                                (0, "notFound", "validationFailed", "product"), (0, "notFound", "unknownRoute", nil),
                                (0, "gated", nil, "orders")]), sequence: 1, now: testNow)
        counts.apply(try batch([(0, "notFound", "expired", "orders")], platform: "android", appVersion: "5.2.1"), sequence: 2, now: testNow)
        var query = lastHour()
        query.groupBy = [.route, .outcome]
        let grouped = counts.query(query)
        #expect(Set(grouped.groups.map { $0.key.map(\.name) }) == [["product", "notFound"], ["none", "notFound"], ["orders", "gated"],
                                                                  ["orders", "notFound"], ["product", "proceed"]])
        #expect(grouped.groups.first.map { $0.key.map(\.name) } == ["product", "notFound"])
        #expect(grouped.groups.first?.total == 2)
        #expect(grouped.groups.count == 5)
        query.filters = [.outcome: "notFound"]
        query.groupBy = [.reason]
        let reasons = counts.query(query)
        #expect(Dictionary(uniqueKeysWithValues: reasons.groups.map { ($0.key[0].name, $0.total) })
                == ["validationFailed": 2, "unknownRoute": 1, "expired": 1])
        query.filters = [.platform: "android", .appVersion: "5.2.1"]
        query.groupBy = []
        #expect(counts.query(query).total == 1)
        query.filters = [.route: "never-seen"]
        #expect(counts.query(query).total == 0)
        query.filters = [:]
        query.groupBy = [.route]
        let product = counts.query(query).groups.first { $0.key[0].name == "product" }
        #expect(product?.failureRate == 2.0 / 3.0)
        query.limit = 1
        let limited = counts.query(query)
        #expect(limited.groups.count == 1)
        #expect(limited.omittedGroups == 2)
    }

    /// What a query reads is taken as a window (under the store's lock) and scanned after:
    /// the window holds the range's buckets and no other, and answers as it was taken, whatever
    /// is counted after.
    @Test func aWindowHoldsItsRangeAndStaysAsTaken() throws {
        var counts = Counts()
        // The first and last minutes of the last hour's range, and one just outside each side;
        // and an hour before the opening window's first.
        counts.apply(try batch([(-3_660, "proceed", nil, "product"), (-3_600, "proceed", nil, "product"),
                                (0, "proceed", nil, "product"), (60, "proceed", nil, "product")]), sequence: 1, now: testNow)
        counts.apply(try batch([(-7_260, "proceed", nil, "product")]), sequence: 2, now: testNow)
        let window = counts.window(for: lastHour())
        #expect(window.buckets.keys.sorted() == [Int32((testNow - 3_600) / 60), Int32(testNow / 60)])
        #expect(window.query(lastHour()).total == 2)
        let week = counts.openingWindow(from: testNow - 7_200, to: testNow)
        #expect(week.buckets.keys.sorted() == [Int32(testNow / 3_600 - 2), Int32(testNow / 3_600 - 1), Int32(testNow / 3_600)])
        #expect(week.opens(from: testNow - 7_200, to: testNow, routes: ["product"]).map(\.count).reduce(0, +) == 4)

        counts.apply(try batch([(0, "proceed", nil, "orders")]), sequence: 3, now: testNow)
        var orders = lastHour()
        orders.filters = [.route: "orders"]
        #expect(counts.query(lastHour()).total == 3)
        #expect(counts.query(orders).total == 1)
        #expect(window.query(lastHour()).total == 2, "counted after the window was taken")
        #expect(window.query(orders).total == 0, "a name interned after the window was taken")
        #expect(week.opens(from: testNow - 7_200, to: testNow, routes: ["product", "orders"]).map(\.count).reduce(0, +) == 4)
        #expect(week.unattributedOpens(from: testNow - 7_200, to: testNow).total == 4)
        #expect(counts.unattributedOpens(from: testNow - 7_200, to: testNow).total == 5)
        #expect(counts.unattributedOpens(from: testNow - 10_800, to: testNow).total == 6, "the hour before the window's first")
    }

    @Test func namesPastTheCapAreOther() throws {
        var limits = TelemetryLimits()
        limits.maximumRoutes = 2
        limits.maximumAppVersions = 1
        let known = Vocabulary(routes: (0..<5).map { "r\($0)" }, appVersions: [.ios: ["1.0", "2.0"]], latestRevision: 7)
        var counts = Counts(limits: limits)
        for (index, route) in ["r0", "r1", "r2", "r3", "nope"].enumerated() {
            counts.apply(try batch([(0, "proceed", nil, route)], appVersion: index < 2 ? "1.0" : "2.0", vocabulary: known),
                         sequence: UInt64(index + 1), now: testNow)
        }
        var query = lastHour()
        query.groupBy = [.route]
        let routes = Dictionary(uniqueKeysWithValues: counts.query(query).groups.map { ($0.key[0].name, $0.total) })
        #expect(routes == ["r0": 1, "r1": 1, "other": 3])
        query.groupBy = [.appVersion]
        let versions = Dictionary(uniqueKeysWithValues: counts.query(query).groups.map { ($0.key[0].name, $0.total) })
        #expect(versions == ["1.0": 2, "other": 3])
    }

    /// The route table full of ids each counted once long ago: a new route is admitted
    /// newest-first (the least recently counted id given back, its counts moved to `other`,
    /// none lost), at most one round a minute, and the table survives a snapshot.
    @Test func newRoutesAreAdmittedNewestFirst() throws {
        var limits = TelemetryLimits()
        limits.maximumRoutes = 32  // two ids a round (a sixteenth)
        let known = Vocabulary(routes: (0..<40).map { "r\($0)" } + ["campaign", "later"], appVersions: [.ios: ["5.3.0"]], latestRevision: 7)
        var counts = Counts(limits: limits)
        for index in 0..<32 {
            counts.apply(try batch([(-3_000 + index * 60, "proceed", nil, "r\(index)")], vocabulary: known), sequence: UInt64(index + 1),
                         now: testNow - 3_000 + index * 60)
        }
        #expect(counts.routes.isFull)
        for count in 0..<7 {
            counts.apply(try batch([(0, "proceed", nil, "campaign")], vocabulary: known), sequence: UInt64(100 + count), now: testNow)
        }
        counts.apply(try batch([(0, "proceed", nil, "later")], vocabulary: known), sequence: 200, now: testNow)
        var query = CountQuery(from: testNow - 3_600, to: testNow + 60, step: .hour)
        query.groupBy = [.route]
        var routes = Dictionary(uniqueKeysWithValues: counts.query(query).groups.map { ($0.key[0].name, $0.total) })
        #expect(routes["campaign"] == 7, "the new campaign counted under its name: \(routes)")
        #expect(routes["r0"] == nil && routes["r1"] == nil && routes["r2"] == 1, "the two least recently counted gave their ids")
        #expect(routes["later"] == 1, "the round's second free id")
        #expect(routes["other"] == 2 && routes.values.reduce(0, +) == 40, "their counts moved to other, none lost: \(routes)")
        #expect(counts.reclaimedRoutes == 2)
        expectTalliesAsRecounted(counts)
        // A third new route this minute finds no room (one round a minute), the next minute it does.
        counts.apply(try batch([(0, "proceed", nil, "r33")], vocabulary: known), sequence: 201, now: testNow)
        counts.apply(try batch([(60, "proceed", nil, "r34")], vocabulary: known), sequence: 202, now: testNow + 60)
        query.to = testNow + 120
        routes = Dictionary(uniqueKeysWithValues: counts.query(query).groups.map { ($0.key[0].name, $0.total) })
        #expect(routes["r33"] == nil && routes["r34"] == 1 && routes["r2"] == nil && routes["other"] == 5, "\(routes)")
        let restored = try #require(SnapshotCodec.encode(counts).withUnsafeBytes { SnapshotCodec.decode($0, limits: limits) })
        #expect(Dictionary(uniqueKeysWithValues: restored.query(query).groups.map { ($0.key[0].name, $0.total) }) == routes)
        var again = restored
        again.apply(try batch([(60, "proceed", nil, "campaign")], vocabulary: known), sequence: 203, now: testNow + 60)
        #expect(again.routes.lastUsed.count == counts.routes.lastUsed.count, "the restored table keeps its slots")
    }

    @Test func aFloodOfUnknownNamesAddsNoValues() throws {
        var counts = Counts()
        for index in 0..<2_000 {
            counts.apply(try batch([(0, "proceed", nil, "route-\(index)")], appVersion: "9.\(index)", revision: 1_000 + index), sequence: UInt64(index + 1), now: testNow)
        }
        #expect(counts.routes.interned.isEmpty)
        #expect(counts.appVersions.interned.isEmpty)
        var query = lastHour()
        query.groupBy = [.route, .appVersion, .revision]
        let groups = counts.query(query).groups
        #expect(groups.count == 1)
        #expect(groups.first?.key.map(\.name) == ["other", "other", "other"])
        #expect(groups.first?.total == 2_000)
    }

    @Test func pastTheCellCapNewCombinationsAreFoldedAndNoEventIsLost() throws {
        var limits = TelemetryLimits()
        limits.maximumCells = 50
        let routes = (0..<300).map { "r\($0)" }
        let known = Vocabulary(routes: routes, appVersions: [.ios: (0..<10).map { "1.\($0)" }], latestRevision: 900)
        var counts = Counts(limits: limits)
        // An attacker's spread: each event its own minute, route, app version and revision.
        for index in 0..<300 {
            counts.apply(try batch([(-60 * index, "proceed", nil, routes[index]), (-60 * index, "gated", nil, routes[index])],
                                   appVersion: "1.\(index % 10)", revision: 1 + index, vocabulary: known),
                         sequence: UInt64(index + 1), now: testNow)
        }
        let buckets = counts.bucketCounts.minutes + counts.bucketCounts.hours
        #expect(buckets == 300 + 6)
        #expect(counts.cells <= limits.maximumCells + 2 * buckets, "\(counts.cells) cells in \(buckets) buckets")
        #expect(counts.cells == (counts.minutes.values.map(\.count) + counts.hours.values.map(\.count)).reduce(0, +))
        #expect(counts.foldedEvents > 500)
        var query = CountQuery(from: testNow - 6 * 3_600, to: testNow + 60, step: .hour)
        #expect(counts.query(query).total == 600, "every event is still counted")
        query.groupBy = [.route, .revision, .appVersion, .outcome]
        let groups = Dictionary(uniqueKeysWithValues: counts.query(query).groups.map { ($0.key.map(\.name).joined(separator: " "), $0.total) })
        #expect(groups["other other other proceed"] == groups["other other other gated"])
        #expect(groups["r0 1 1.0 proceed"] == 1, "what came before the cap keeps its names")
        // Pruning frees cells; later combinations get their names again.
        counts.prune(now: testNow + 90 * 86_400 - 3_600)
        #expect(counts.cells < limits.maximumCells)
        expectTalliesAsRecounted(counts)
        counts.apply(try batch([(0, "proceed", nil, "r5")], appVersion: "1.0", revision: 9, vocabulary: known), sequence: 301, now: testNow)
        query = CountQuery(from: testNow - 60, to: testNow + 60, step: .minute)
        query.groupBy = [.route]
        #expect(counts.query(query).groups.contains { $0.key[0].name == "r5" })
    }

    /// One bucket, many new keys in one batch: the table grows while it folds. (At 11, the
    /// first folded key is the one that makes a 16-slot table grow.)
    @Test(arguments: [11, 20])
    func theCapHoldsWhenATableGrowsMidBatch(cap: Int) throws {
        var limits = TelemetryLimits()
        limits.maximumCells = cap
        let routes = (0..<400).map { "r\($0)" }
        let known = Vocabulary(routes: routes, latestRevision: 7)
        var counts = Counts(limits: limits)
        counts.apply(try batch(routes.map { (0, "proceed", nil, $0) }, vocabulary: known), sequence: 1, now: testNow)
        // The hour is filled first: `cap` named cells and one folded; the minute gets only its folded cell.
        #expect(counts.cells == cap + 2)
        #expect(counts.foldedEvents == UInt64(400 - cap + 400))
        var query = lastHour()
        query.groupBy = [.route]
        #expect(counts.query(query).groups.map(\.total) == [400], "the minute bucket holds every event, folded")
        #expect(counts.query(lastHour()).total == 400)
    }

    @Test func retentionDropsMinutesButTheHoursRemain() throws {
        var counts = Counts()
        counts.apply(try batch([(-3 * 86_400, "notFound", "expired", "product"), (-60, "proceed", nil, "product")]), sequence: 1, now: testNow)
        #expect(counts.bucketCounts.minutes == 1, "an event older than 48 h goes to its hour only")
        #expect(counts.bucketCounts.hours == 2)
        counts.prune(now: testNow + 2 * 86_400)
        #expect(counts.bucketCounts.minutes == 0)
        expectTalliesAsRecounted(counts)
        #expect(counts.bucketCounts.hours == 2)
        var query = CountQuery(from: testNow - 4 * 86_400, to: testNow, step: .hour)
        #expect(counts.query(query).total == 2)
        counts.prune(now: testNow + 88 * 86_400)
        #expect(counts.bucketCounts.hours == 1)
        expectTalliesAsRecounted(counts)
        query.to = testNow + 88 * 86_400
        #expect(counts.query(query).total == 1)
        counts.prune(now: testNow + 91 * 86_400)
        #expect(counts.bucketCounts.hours == 0)
        expectTalliesAsRecounted(counts)
    }

    @Test func snapshotRoundTrips() throws {
        var counts = Counts()
        counts.apply(try batch([(0, "proceed", nil, "product"), (-100_000, "notFound", "expired", "orders")]), sequence: 41, now: testNow)
        counts.apply(try batch([(0, "gated", nil, "orders")], platform: "android", appVersion: "5.2.1"), sequence: 42, now: testNow)
        let bytes = SnapshotCodec.encode(counts)
        let restored = try #require(bytes.withUnsafeBytes { SnapshotCodec.decode($0, limits: TelemetryLimits()) })
        #expect(restored.lastSequence == 42)
        #expect(restored.minutes == counts.minutes)
        #expect(restored.hours == counts.hours)
        var query = lastHour()
        query.groupBy = [.route, .platform, .appVersion]
        #expect(restored.query(query).groups.map { $0.key.map(\.name) } == counts.query(query).groups.map { $0.key.map(\.name) })
        for index in [0, 8, bytes.count / 2, bytes.count - 1] {
            var damaged = bytes
            damaged[index] ^= 0x40
            #expect(damaged.withUnsafeBytes { SnapshotCodec.decode($0, limits: TelemetryLimits()) } == nil, "flipped byte \(index)")
        }
    }

    @Test func framesRoundTripAndATornTailIsCut() throws {
        let first = try batch([(0, "proceed", nil, "product"), (0, "gated", nil, "orders")])
        let second = try batch([(0, "notFound", "malformed", nil)], platform: "android", appVersion: "0.0.1")
        var log: [UInt8] = []
        Frame.encode(first, sequence: 5, into: &log)
        let firstLength = log.count
        Frame.encode(second, sequence: 6, into: &log)
        let scanned = log.withUnsafeBytes { Frame.scan($0) }
        #expect(scanned.frames.map(\.sequence) == [5, 6])
        #expect(scanned.validLength == log.count)
        #expect(scanned.frames[0].entry.batch?.tallies == first.tallies)
        #expect(scanned.frames[0].entry.batch?.routes == first.routes)
        #expect(scanned.frames[1].entry.batch?.appVersion == .some(nil))
        for cut in stride(from: firstLength, to: log.count, by: 3) {
            let torn = Array(log[0..<cut])
            let result = torn.withUnsafeBytes { Frame.scan($0) }
            #expect(result.frames.count == 1)
            #expect(result.validLength == firstLength)
        }
        var flipped = log
        flipped[firstLength + 12] ^= 1
        #expect(flipped.withUnsafeBytes { Frame.scan($0) }.validLength == firstLength)
        #expect(flipped.withUnsafeBytes { Frame.scan($0) }.end == .damaged)
        #expect(scanned.end == .zeros, "the end of the bytes")
        #expect((log + Array(repeating: 0, count: 20)).withUnsafeBytes { Frame.scan($0) }.end == .zeros)
        // A frame whose sequence does not rise was written before a compaction: the log ends there.
        var older = log
        Frame.encode(first, sequence: 2, into: &older)
        let stale = older.withUnsafeBytes { Frame.scan($0) }
        #expect(stale.validLength == log.count && stale.end == .olderFrame)
    }
}

@Suite("CRC-32C and string scanning")
struct CodecTests {
    /// The bitwise definition, for comparison.
    static func reference(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }

    @Test func crc32cMatchesTheCheckValueAndTheBitwiseDefinition() {
        #expect(Array("123456789".utf8).withUnsafeBytes(CRC32C.checksum) == 0xE306_9283, "RFC 3720 check value")
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(bytes.withUnsafeBytes(CRC32C.checksum) == Self.reference(bytes), "length \(length)")
        }
    }

    /// Each special byte at every position of a string, across the 8-byte steps of the scan.
    @Test func specialBytesAreFoundWhereverTheyFallInAWord() throws {
        let cases: [(json: String, decoded: String?)] = [("\\\"", "\""), ("\\\\", "\\"), ("\\n", "\n"), ("é", "é"), ("\\u00e9", "é"), ("\u{01}", nil), ("\u{1F}", nil), (" ", " "), ("~", "~")]
        for (json, decoded) in cases {
            for position in 0..<20 {
                let name = String(repeating: "a", count: position) + json + "bcdefghij"
                let body = batchBody([#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "route": "\#(name)"}"#])
                let expected = decoded.map { String(repeating: "a", count: position) + $0 + "bcdefghij" }
                let wide = Vocabulary(routes: expected.map { [$0] } ?? [], appVersions: [.ios: ["5.3.0"]], latestRevision: 7)
                let result = Result { try BatchParser(vocabulary: wide).parse(Array(body.utf8), now: testNow) }
                switch (result, expected) {
                case (.success(let batch), let expected?):
                    #expect(batch.routes.map { String(decoding: $0, as: UTF8.self) } == [expected], "\(json) at \(position)")
                case (.failure, nil): break
                default: Issue.record("\(json) at \(position): \(result)")
                }
            }
        }
    }
}

@Suite("CountTable against Dictionary")
struct CountTableTests {
    /// Keys as the packed layout makes them (high route bits, low dimension bits), the
    /// extremes, and keys sharing a home slot; each added several times.
    @Test(arguments: [0, 1, 7, 100, 5_000])
    func agreesWithADictionary(distinct: Int) {
        var generator = SplitMix(seed: UInt64(distinct))
        var keys: [UInt64] = [0, .max, 1 << 63]
        while keys.count < distinct + 3 {
            let route = generator.next() % 10_000, low = generator.next() % 4_096
            keys.append(route << 46 | low)
        }
        keys = Array(keys.prefix(distinct == 0 ? 0 : distinct + 3))
        var table = CountTable(), reference: [UInt64: UInt64] = [:]
        for round in 1...3 {
            for key in keys.shuffled(using: &generator) {
                let amount = UInt64(round) * (key % 5 + 1)
                table.add(key, amount)
                reference[key, default: 0] += amount
            }
        }
        #expect(table.count == reference.count)
        #expect(Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0.count) }) == reference)
        for (key, count) in reference { #expect(table[key] == count) }
        #expect(table[12_345_678_901] == 0 || reference[12_345_678_901] != nil)
        var other = CountTable(minimumCapacity: reference.count)
        for (key, count) in reference.sorted(by: { $0.key > $1.key }) { other.add(key, count) }
        #expect(other == table, "equal whatever the insertion order and capacity")
        if let (key, _) = reference.first {
            other.add(key, 1)
            #expect(other != table)
        }
    }

    /// Runs of tallies are added in one pass that stops to grow the table; the result, and
    /// the room taken, must be those of adding each item alone.
    @Test(arguments: [1, 5, 50, 400])
    func aRunAddsAsItsItemsOneByOne(run: Int) {
        var generator = SplitMix(seed: UInt64(run))
        var bulk = CountTable(), single = CountTable()
        for _ in 0..<60 {
            // Runs repeating keys (as a batch's tallies do) among fresh ones.
            let keys = (0..<run).map { _ in generator.next() % 3 == 0 ? generator.next() % 8 : generator.next() % 100_000 }
            let items = keys.map { ($0, $0 % 7 + 1) }
            bulk.add(items[...]) { $0 }
            for (key, amount) in items { single.add(key, amount) }
            #expect(bulk == single)
            #expect(bulk.count == single.count)
            #expect(bulk.capacity == single.capacity, "a run must not take more room than its keys need")
        }
    }
}
