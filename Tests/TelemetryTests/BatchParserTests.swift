import CivilDate
import Foundation
import TestSupport
import Testing
@testable import Telemetry

/// 2026-11-21T12:00:00Z
let testNow = 1_795_262_400
let vocabulary = Vocabulary(routes: ["product", "orders", "héllo"], preconditions: ["auth"],
                            appVersions: [.ios: ["5.3.0"], .android: ["5.3.0", "5.2.1"]], latestRevision: 7)

func batchBody(_ events: [String], client: String = #"{"platform": "ios", "appVersion": "5.3.0", "revision": 7}"#) -> String {
    #"{"client": \#(client), "events": [\#(events.joined(separator: ","))]}"#
}

func parse(_ body: String, limits: TelemetryLimits = TelemetryLimits()) throws(BatchError) -> Batch {
    try BatchParser(vocabulary: vocabulary, limits: limits).parse(Array(body.utf8), now: testNow)
}

@Suite("Telemetry batch parsing")
struct BatchParserTests {
    static let accepted: [(String, Tally)] = [
        (#"{"ts": "2026-11-21T11:59:30Z", "entry": "universalLink", "outcome": "proceed", "route": "product", "destination": "productDetail"}"#,
         Tally(minute: Int32(testNow / 60 - 1), entry: 0, outcome: 0, reason: 0, route: 2, precondition: 0, count: 1)),
        (#"{"ts": "2026-11-21T11:00:00.250+01:00", "entry": "scheme", "outcome": "notFound", "reason": "unknownRoute"}"#,
         Tally(minute: Int32(testNow / 60 - 120), entry: 1, outcome: 2, reason: 2, route: 0, precondition: 0, count: 1)),
        (#"{"outcome": "gated", "precondition": "auth", "entry": "push", "ts": "2026-11-21t12:00:00z", "route": "orders", "count": 12}"#,
         Tally(minute: Int32(testNow / 60), entry: 2, outcome: 1, reason: 0, route: 2, precondition: 2, count: 12)),
        (#"{"ts": "2026-11-21T12:04:59Z", "entry": "inApp", "outcome": "notFound", "reason": "expired", "route": "campaign-2019"}"#,
         Tally(minute: Int32(testNow / 60 + 4), entry: 3, outcome: 2, reason: 4, route: 1, precondition: 0, count: 1)),
        (#"{"ts": "2026-08-24T12:00:00Z", "entry": "scheme", "outcome": "gated", "precondition": "premium"}"#,
         Tally(minute: Int32((testNow - 89 * 86_400) / 60), entry: 1, outcome: 1, reason: 0, route: 0, precondition: 1, count: 1)),
        (#"{"ts":"2026-11-21T12:00:00Z","entry":"scheme","outcome":"notFound","reason":"validationFailed","route":"h\u00e9llo"}"#,
         Tally(minute: Int32(testNow / 60), entry: 1, outcome: 2, reason: 3, route: 2, precondition: 0, count: 1)),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "deferred", "outcome": "proceed", "route": "product"}"#,
         Tally(minute: Int32(testNow / 60), entry: 6, outcome: 0, reason: 0, route: 2, precondition: 0, count: 1)),
        (#"{"ts":"2026-11-21T12:00:00Z","entry":"scheme","outcome":"notFound","reason":"malformed","count":1000}"#,
         Tally(minute: Int32(testNow / 60), entry: 1, outcome: 2, reason: 1, route: 0, precondition: 0, count: 1_000)),
        (#"{"ts":"2026-11-21T12:00:00Z","entry":"scheme","outcome":"notFound","reason":"malformed","count":12.0}"#,
         Tally(minute: Int32(testNow / 60), entry: 1, outcome: 2, reason: 1, route: 0, precondition: 0, count: 12)),
        (#"{"ts":"2026-11-21T12:00:00Z","entry":"scheme","outcome":"notFound","reason":"malformed","count":1.5e1}"#,
         Tally(minute: Int32(testNow / 60), entry: 1, outcome: 2, reason: 1, route: 0, precondition: 0, count: 15)),
        (#"{"ts":"2026-11-21T12:00:00Z","entry":"scheme","outcome":"notFound","reason":"malformed","count":300E-2}"#,
         Tally(minute: Int32(testNow / 60), entry: 1, outcome: 2, reason: 1, route: 0, precondition: 0, count: 3)),
    ]

    @Test(arguments: accepted)
    func acceptsAValidEvent(_ event: String, _ expected: Tally) throws {
        let batch = try parse(batchBody([event]))
        #expect(batch.rejected == [])
        #expect(batch.tallies == [expected])
    }

    static let rejected: [(String, String)] = [
        (#"{"entry": "scheme", "outcome": "proceed"}"#, "ts is required"),
        (#"{"ts": "2026-11-21T12:00:00Z", "outcome": "proceed"}"#, "entry is required"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme"}"#, "outcome is required"),
        (#"{"ts": "2026-11-21 12:00:00", "entry": "scheme", "outcome": "proceed"}"#, "RFC 3339"),
        (#"{"ts": "2026-02-30T12:00:00Z", "entry": "scheme", "outcome": "proceed"}"#, "RFC 3339"),
        (#"{"ts": "2026-11-21T24:00:00Z", "entry": "scheme", "outcome": "proceed"}"#, "RFC 3339"),
        (#"{"ts": "2026-11-21T12:00:00", "entry": "scheme", "outcome": "proceed"}"#, "RFC 3339"),
        (#"{"ts": 1795262400, "entry": "scheme", "outcome": "proceed"}"#, "RFC 3339"),
        (#"{"ts": "2026-11-21T12:05:01Z", "entry": "scheme", "outcome": "proceed"}"#, "in the future"),
        (#"{"ts": "2026-08-22T12:00:00Z", "entry": "scheme", "outcome": "proceed"}"#, "90-day retention"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "email", "outcome": "proceed"}"#, "entry must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "Scheme", "outcome": "proceed"}"#, "entry must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "web", "outcome": "proceed"}"#, "entry must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "bot", "outcome": "proceed"}"#, "entry must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "crashed"}"#, "outcome must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "notFound"}"#, "needs a reason"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "notFound", "reason": "gone"}"#, "reason must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "reason": "expired"}"#, "Only a notFound"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "precondition": "auth"}"#, "Only a gated"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "route": ""}"#, "route must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "route": 7}"#, "route must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "route": "\#(String(repeating: "r", count: 129))"}"#, "route must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "destination": ["a"]}"#, "destination must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "count": 0}"#, "count must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "count": 1.5}"#, "count must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "count": 1.5}"#, "count must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "count": 25e-1}"#, "count must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "count": 1e20}"#, "count must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "count": "2"}"#, "count must be"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "url": "https://shop.example/p/1?email=a@b"}"#, "Raw URLs"),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "user": {"id": 1}}"#, "Unknown field \"user\""),
        (#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "outcome": "gated"}"#, "appears twice"),
        (#"["ts", "2026-11-21T12:00:00Z"]"#, "must be an object"),
        (#"null"#, "must be an object"),
    ]

    @Test(arguments: rejected)
    func rejectsAnInvalidEventAndKeepsTheOthers(_ event: String, _ message: String) throws {
        let good = #"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed"}"#
        let batch = try parse(batchBody([good, event, good]))
        #expect(batch.tallies.count == 2)
        #expect(batch.rejected.count == 1)
        #expect(batch.rejected.first?.index == 1)
        #expect(batch.rejected.first?.error.contains(message) == true, "\(batch.rejected.first?.error ?? "accepted")")
    }

    static let refused: [(String, BatchError)] = [
        ("", .malformed("The body is not valid JSON: unexpected end of the body at byte 0.")),
        ("[]", .malformed("The body must be a JSON object {\"client\": …, \"events\": […]}.")),
        ("[] []", .malformed("The body is not valid JSON: unexpected bytes after the value at byte 3.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0"}, "events": [}"#, .malformed("The body is not valid JSON: expected a JSON value at byte 66.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0"}, "events": [],}"#, .malformed("The body is not valid JSON: expected a string at byte 68.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0"}, "events": []} x"#, .malformed("The body is not valid JSON: unexpected bytes after the batch at byte 69.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0"}, "events": [{"ts": "\#u{01}"}]}"#, .malformed("The body is not valid JSON: a control character in a string at byte 74.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0"}, "events": [{"count": 01}]}"#, .malformed("The body is not valid JSON: a number with a leading zero at byte 77.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0"}, "events": [{"x": "\ud800"}]}"#, .malformed("The body is not valid JSON: a lone surrogate in a \\u escape at byte 79.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0"}}"#, .malformed("The batch has no \"events\" array.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0"}, "events": {}}"#, .malformed("\"events\" must be an array.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0"}, "events": [], "user": 1}"#, .malformed("Unknown field \"user\"; a batch has \"batch\", \"client\" and \"events\".")),
        (#"{"events": []}"#, .invalidClient("The batch has no \"client\" ({\"platform\", \"appVersion\", \"revision\"}).")),
        (#"{"client": {"platform": "web", "appVersion": "5.3.0"}, "events": []}"#, .invalidClient("client.platform must be \"ios\" or \"android\".")),
        (#"{"client": {"appVersion": "5.3.0"}, "events": []}"#, .invalidClient("client.platform (\"ios\" or \"android\") is required.")),
        (#"{"client": {"platform": "ios"}, "events": []}"#, .invalidClient("client.appVersion is required.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3 beta"}, "events": []}"#, .invalidClient("client.appVersion must be a version string such as \"5.3.0\".")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0", "revision": -1}, "events": []}"#, .invalidClient("client.revision must be a whole number.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0", "revision": "7"}, "events": []}"#, .invalidClient("client.revision must be a whole number.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0", "device": "x"}, "events": []}"#, .invalidClient("Unknown field client.device; a client has platform, appVersion, revision, cohort, source and dropped.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0", "dropped": -1}, "events": []}"#, .invalidClient("client.dropped must be a whole number from 0 to 100000.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0", "dropped": 100001}, "events": []}"#, .droppedTooLarge(100_000)),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0", "dropped": 1000000001}, "events": []}"#, .droppedTooLarge(100_000)),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0", "dropped": "3"}, "events": []}"#, .invalidClient("client.dropped must be a whole number from 0 to 100000.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0"}, "events": [{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "count": 1001}]}"#, .countTooLarge(1_000)),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0"}, "events": [{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "count": 1e7}]}"#, .countTooLarge(1_000)),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0"}, "events": [\#(String(repeating: #"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "count": 1000},"#, count: 10))"#
            + #"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed"}]}"#, .batchTooLarge(10_000)),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0", "source": "3B6C0F5E9A1D47C28E0B5F6A7D9C1E24"}, "events": []}"#, .invalidClient("client.source must be the install's source key for the day: 32 lowercase hex digits.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0", "source": "3b6c0f5e"}, "events": []}"#, .invalidClient("client.source must be the install's source key for the day: 32 lowercase hex digits.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0", "cohort": 100}, "events": []}"#, .invalidClient("client.cohort must be a whole number from 0 to 99.")),
        (#"{"client": {"platform": "ios", "appVersion": "5.3.0", "cohort": -1}, "events": []}"#, .invalidClient("client.cohort must be a whole number from 0 to 99.")),
        (#"{"batch": "xyz", "client": {"platform": "ios", "appVersion": "5.3.0"}, "events": []}"#, .malformed("\"batch\" must be the batch's id: 32 lowercase hex digits.")),
        (#"{"batch": 7, "client": {"platform": "ios", "appVersion": "5.3.0"}, "events": []}"#, .malformed("\"batch\" must be the batch's id: 32 lowercase hex digits.")),
        (#"{"client": [], "events": []}"#, .invalidClient("\"client\" must be an object.")),
    ]

    @Test(arguments: refused)
    func refusesABatchWhole(_ body: String, _ expected: BatchError) {
        #expect(throws: expected) { try parse(body) }
    }

    @Test("client.dropped: what the client dropped before sending, 0 when absent")
    func clientDropped() throws {
        let event = #"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed"}"#
        #expect(try parse(batchBody([event])).droppedByClient == 0)
        let dropped = try parse(batchBody([event], client: #"{"platform": "ios", "appVersion": "5.3.0", "dropped": 100000}"#))
        #expect(dropped.droppedByClient == 100_000 && dropped.tallies.count == 1)
    }

    @Test func refusesMoreEventsThanTheLimit() {
        var limits = TelemetryLimits()
        limits.maximumEvents = 3
        let event = #"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed"}"#
        #expect(throws: BatchError.tooManyEvents(3)) { try parse(batchBody(Array(repeating: event, count: 4)), limits: limits) }
        #expect((try? parse(batchBody(Array(repeating: event, count: 3)), limits: limits))?.tallies.count == 3)
    }

    @Test func namesNoVocabularyHasAreOther() throws {
        let event = #"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "route": "product"}"#
        let known = try parse(batchBody([event]))
        #expect(known.appVersion == Array("5.3.0".utf8))
        #expect(known.revision == 7)
        #expect(known.routes == [Array("product".utf8)])
        let unknown = try parse(batchBody([event], client: #"{"platform": "ios", "appVersion": "5.2.1", "revision": 8}"#))
        #expect(unknown.appVersion == nil, "5.2.1 has a schema on android only")
        #expect(unknown.revision == 0, "revision 8 does not exist")
        let android = try parse(batchBody([event], client: #"{"platform": "android", "appVersion": "5.2.1"}"#))
        #expect(android.platform == .android)
        #expect(android.appVersion == Array("5.2.1".utf8))
    }

    @Test func aRouteNamedTwiceTakesOneSlot() throws {
        let events = ["product", "orders", "product", "nope"].map {
            #"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "route": "\#($0)"}"#
        }
        let batch = try parse(batchBody(events))
        #expect(batch.routes == [Array("product".utf8), Array("orders".utf8)])
        #expect(batch.tallies.map(\.route) == [2, 3, 2, 1])
    }

    @Test func manyDistinctRoutesInOneBatchKeepTheirSlots() throws {
        let names = (0..<40).map { "route-\($0)" }
        let wide = Vocabulary(routes: names, appVersions: [.ios: ["5.3.0"]], latestRevision: 7)
        let events = (names + names.reversed()).map { #"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "proceed", "route": "\#($0)"}"# }
        let batch = try BatchParser(vocabulary: wide).parse(Array(batchBody(events).utf8), now: testNow)
        #expect(batch.routes.map { String(decoding: $0, as: UTF8.self) } == names)
        let forward: [UInt16] = (0..<40).map { UInt16($0 + 2) }
        #expect(batch.tallies.map(\.route) == forward + forward.reversed())
    }

    /// Every prefix of a valid body is refused, never accepted or crashed on.
    @Test func everyTruncationIsRefused() {
        let body = batchBody([#"{"ts": "2026-11-21T12:00:00Z", "entry": "scheme", "outcome": "notFound", "reason": "malformed", "route": "h\u00e9llo", "count": 3}"#])
        let bytes = Array(body.utf8)
        for length in 0..<bytes.count {
            let prefix = Array(bytes[0..<length])
            #expect(throws: BatchError.self) { try BatchParser(vocabulary: vocabulary).parse(prefix, now: testNow) }
        }
    }

    /// What Foundation's parser accepts as a batch, this one reads the same way.
    @Test func agreesWithJSONSerializationOnValidity() throws {
        let bodies = Self.refused.map(\.0) + Self.rejected.map { batchBody([$0.0]) } + Self.accepted.map { batchBody([$0.0]) }
        for body in bodies {
            let foundation = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) != nil
            var ours = true
            do { _ = try parse(body) } catch { if case .malformed(let message) = error, message.hasPrefix("The body is not valid JSON") { ours = false } }
            // Foundation accepts a trailing comma; RFC 8259 does not, and neither do we.
            if body.contains("],}") {
                #expect(!ours)
                continue
            }
            #expect(foundation == ours, "\(body)")
        }
    }
}

@Suite("RFC 3339 timestamps")
struct TimestampTests {
    static let rows: [(String, Int?)] = [
        ("1970-01-01T00:00:00Z", 0),
        ("2026-11-21T12:00:00Z", testNow),
        ("2026-11-21T13:00:00+01:00", testNow),
        ("2026-11-21T11:30:00-00:30", testNow),
        ("2026-11-21T12:00:00.999999Z", testNow),
        ("2024-02-29T00:00:00Z", 1_709_164_800),
        ("2016-12-31T23:59:60Z", 1_483_228_799),
        ("2023-02-29T00:00:00Z", nil),
        ("2026-13-01T00:00:00Z", nil),
        ("2026-11-21T12:00:00.Z", nil),
        ("2026-11-21T12:00:00+0100", nil),
        ("2026-11-21T12:00:00+24:00", nil),
        ("2026-11-21T12:00Z", nil),
        ("2026-11-21T12:00:00ZZ", nil),
        ("+2026-11-21T12:00:00Z", nil),
    ]

    @Test(arguments: rows)
    func parses(_ text: String, _ expected: Int?) {
        var text = text
        #expect(text.withUTF8(Timestamp.parse) == expected)
    }

    @Test func theDayCacheGivesTheSameAnswers() {
        var cache = Timestamp.DayCache()
        for (text, expected) in Self.rows + Self.rows.reversed() + [("2026-11-21T23:59:59Z", testNow + 43_199), ("2026-11-21T24:00:00Z", nil)] {
            var text = text
            #expect(text.withUTF8 { Timestamp.parse($0, cache: &cache) } == expected, "\(text)")
        }
    }

    /// The clock `HH:MM:SS` is checked eight bytes at once: every byte value at each of its
    /// positions must be judged as a byte-by-byte reading judges it.
    @Test func everyByteOfTheClock() {
        func reference(_ clock: [UInt8]) -> Int? {
            func pair(_ at: Int) -> Int? {
                guard (0x30...0x39).contains(clock[at]), (0x30...0x39).contains(clock[at + 1]) else { return nil }
                return Int(clock[at] - 0x30) * 10 + Int(clock[at + 1] - 0x30)
            }
            guard let hour = pair(0), clock[2] == 0x3A, let minute = pair(3), clock[5] == 0x3A, let second = pair(6),
                  hour <= 23, minute <= 59, second <= 60 else { return nil }
            return testNow - 12 * 3_600 + hour * 3_600 + minute * 60 + min(second, 59)
        }
        var checked = 0
        for base in ["12:34:56", "00:00:00", "23:59:60", "09:09:09"] {
            for position in 0..<8 {
                for byte in UInt8.min...UInt8.max {
                    var clock = Array(base.utf8)
                    clock[position] = byte
                    let text = Array("2026-11-21T".utf8) + clock + Array("Z".utf8)
                    let ours = text.withUnsafeBufferPointer { Timestamp.parse($0) }
                    #expect(ours == reference(clock), "\(base), byte \(byte) at \(position)")
                    checked += 1
                }
            }
        }
        #expect(checked == 8_192)
    }

    @Test func formatsWhatItParses() {
        var early = Timestamp.format(-56_000_000_000)
        #expect(early.hasPrefix("0195-"), "years before 1000 keep four digits: \(early)")
        #expect(early.withUTF8(Timestamp.parse) == -56_000_000_000)
        var text = Timestamp.format(testNow + 59)
        #expect(text == "2026-11-21T12:00:59Z")
        #expect(text.withUTF8(Timestamp.parse) == testNow + 59)
    }
}

/// `JSONScanner.string` finds the end of a plain string eight bytes at a time and takes
/// the first special byte of a word as exact. Every kind of content (plain, an escape, a
/// raw control byte, UTF-8, a byte that is not UTF-8) at every position of strings of 0 to
/// 20 bytes, starting at every alignment and followed by more JSON, must read as
/// Foundation's JSONSerialization reads it.
@Suite("JSON strings at every alignment")
struct JSONStringAlignmentTests {
    static let specials: [(label: String, bytes: [UInt8])] = [
        ("none", []), ("escaped quote", Array(#"\""#.utf8)), ("escaped backslash", Array(#"\\"#.utf8)),
        ("\\n", Array(#"\n"#.utf8)), ("\\u00e9", Array(#"\u00e9"#.utf8)), ("raw control", [0x01]), ("raw tab", [0x09]),
        ("é", Array("é".utf8)), ("not UTF-8", [0xFF]), ("truncated UTF-8", [0xC3]),
    ]

    @Test(arguments: 0..<specials.count)
    func readsAsFoundationDoes(_ kind: Int) throws {
        let special = Self.specials[kind].bytes
        for length in 0...20 {
            for position in 0...length where special.isEmpty ? position == 0 : true {
                for padding in 0..<8 {
                    var content = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    content.insert(contentsOf: special, at: position)
                    let text = [UInt8](repeating: 0x20, count: padding) + [0x22] + content + [0x22] + Array(#","next":1}"#.utf8)
                    let expected = (try? JSONSerialization.jsonObject(with: Data([0x22] + content + [0x22]), options: .fragmentsAllowed)) as? String
                    let ours: [UInt8]? = text.withUnsafeBufferPointer { buffer in
                        var scanner = JSONScanner(buffer)
                        defer { scanner.deallocate() }
                        guard let value = try? scanner.string() else { return nil }
                        #expect(buffer[scanner.offset] == UInt8(ascii: ","), "the scanner must stop just after the closing quote")
                        return Array(value.bytes)
                    }
                    #expect(ours == expected.map { Array($0.utf8) }, "\(Self.specials[kind].label), length \(length), at \(position), padding \(padding)")
                }
            }
        }
    }
}

/// The parser matches the usual spelling of a field or an enumeration value in place and
/// reads any other spelling as a string. However a batch is spelled (any character of a key
/// or value as a `\u` escape, whitespace between any two tokens), it must read exactly as
/// its compact spelling does, valid events and rejected ones alike.
@Suite("Telemetry batch spellings")
struct BatchSpellingTests {
    /// Events as (key, value) pairs; a value is a string unless it is a number.
    static func events(_ generator: inout SplitMix) -> [[(String, Any)]] {
        let values: [String: [Any]] = [
            "ts": ["2026-11-21T11:59:30Z", "2026-11-21T11:00:00.250+01:00", "2026-11-21T12:00:00Z", "2026-11-21 12:00:00"],
            "entry": ["universalLink", "scheme", "push", "inApp", "pus", "pushh", "Push", "email"],
            "outcome": ["proceed", "gated", "notFound", "proceeds", "notfound"],
            "reason": ["malformed", "unknownRoute", "validationFailed", "expired", "expire", "validationFailedX"],
            "route": ["product", "orders", "héllo", "retired", ""],
            "destination": ["productDetail", "home"],
            "precondition": ["auth", "premium"],
            "count": [1, 12, 0],
            "tsx": ["2026-11-21T12:00:00Z"], "entr": ["push"], "Outcome": ["gated"], "destinatio": ["home"], "url": ["https://x.example/"],
        ]
        // The fields each outcome may have (a wrong one now and then), and keys events lack.
        let outcomes: [(String, [String])] = [("proceed", ["route", "destination"]), ("gated", ["precondition", "route"]), ("notFound", ["reason", "route"])]
        let rare = ["tsx", "entr", "Outcome", "destinatio", "url", "reason", "precondition"]
        return (0..<40).map { _ in
            let (outcome, optional) = outcomes.randomElement(using: &generator)!
            var keys = ["ts", "entry"] + (optional + ["count"]).filter { _ in Bool.random(using: &generator) }
            if outcome == "notFound", !keys.contains("reason") { keys.append("reason") }
            if Int.random(in: 0..<8, using: &generator) == 0 { keys.append(rare.randomElement(using: &generator)!) }
            if Int.random(in: 0..<16, using: &generator) == 0 { keys.append(keys.randomElement(using: &generator)!) }
            var fields: [(String, Any)] = keys.map { key in
                // Mostly the first (valid) value, so most events are accepted.
                let choices = values[key]!
                return (key, Int.random(in: 0..<8, using: &generator) == 0 ? choices.randomElement(using: &generator)! : choices[0])
            }
            fields.append(("outcome", Int.random(in: 0..<16, using: &generator) == 0 ? values["outcome"]!.randomElement(using: &generator)! : outcome))
            fields.shuffle(using: &generator)
            return fields
        }
    }

    /// `text` as a JSON string; when `escape`, one character (at random) as `\uXXXX`.
    static func string(_ text: String, escape: Bool, _ generator: inout SplitMix) -> String {
        var scalars = text.unicodeScalars.map { String($0) }
        if escape, !scalars.isEmpty {
            let index = Int.random(in: 0..<scalars.count, using: &generator)
            let code = String(text.unicodeScalars[text.unicodeScalars.index(text.unicodeScalars.startIndex, offsetBy: index)].value, radix: 16)
            scalars[index] = "\\u" + String(repeating: "0", count: 4 - code.count) + (Bool.random(using: &generator) ? code : code.uppercased())
        }
        return "\"" + scalars.joined() + "\""
    }

    static func spell(_ events: [[(String, Any)]], loose: Bool, _ generator: inout SplitMix) -> String {
        func space() -> String { loose ? ["", " ", "\n  ", "\t"].randomElement(using: &generator)! : "" }
        func escape() -> Bool { loose && Int.random(in: 0..<3, using: &generator) == 0 }
        let spelled = events.map { fields in
            "{" + space() + fields.map { key, value in
                let valueText = value is String ? string(value as! String, escape: escape(), &generator) : "\(value)"
                return string(key, escape: escape(), &generator) + space() + ":" + space() + valueText + space()
            }.joined(separator: "," + space()) + "}"
        }
        return #"{"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 7}, "events": ["# + spelled.joined(separator: "," + space()) + space() + "]}"
    }

    @Test func everySpellingReadsAsTheCompactOne() throws {
        var generator = SplitMix(seed: 20_261_121)  // the same batches on every run
        var accepted = 0, rejected = 0
        for round in 0..<200 {
            let events = Self.events(&generator)
            let compact = try parse(Self.spell(events, loose: false, &generator))
            let loose = try parse(Self.spell(events, loose: true, &generator))
            #expect(loose.tallies == compact.tallies, "round \(round)")
            #expect(loose.rejected == compact.rejected, "round \(round)")
            #expect(loose.routes == compact.routes && loose.preconditions == compact.preconditions, "round \(round)")
            accepted += compact.tallies.count
            rejected += compact.rejected.count
        }
        // Both kinds are exercised in earnest.
        #expect(accepted > 2_000 && rejected > 1_000, "\(accepted) accepted, \(rejected) rejected")
        print("spellings: \(accepted) accepted, \(rejected) rejected")
    }
}
