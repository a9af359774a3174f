// make bench-telemetry's helper:
//   TelemetryBench generate DIR COUNT NOW   write COUNT batches of 50 events (batch-N.json)
//   TelemetryBench decode DIR SECONDS THREADS
//       events per second of decoding those batches with Foundation's JSONDecoder into
//       Codable structs (the ordinary way), and with Waymark's BatchParser, each on THREADS
//       threads for SECONDS.
//   TelemetryBench parse DIR ROUNDS
//       parses each batch ROUNDS times with BatchParser on one thread and prints the events
//       accepted: a fixed amount of work, for counting instructions under callgrind.
import CivilDate
import Foundation
import Telemetry

/// What an app would declare to decode a batch with Codable.
struct CodableBatch: Decodable {
    struct Client: Decodable {
        enum Platform: String, Decodable { case ios, android }
        var platform: Platform
        var appVersion: String
        var revision: Int?
    }
    struct Event: Decodable {
        enum Entry: String, Decodable { case universalLink, scheme, push, inApp }
        enum Outcome: String, Decodable { case proceed, gated, notFound }
        enum Reason: String, Decodable { case malformed, unknownRoute, validationFailed, expired }
        var ts: Date
        var entry: Entry
        var outcome: Outcome
        var reason: Reason?
        var route: String?
        var destination: String?
        var precondition: String?
        var count: Int?
    }
    var client: Client
    var events: [Event]
}

let routes = ["home", "product", "category", "search", "cart", "orders", "order-detail", "settings", "new-arrivals", "spring-sale"]
let destinations = ["home", "productDetail", "category", "search", "cart", "orders", "orderDetail", "settings"]

func generate(directory: String, count: Int, now: Int) throws {
    var seed: UInt64 = 20_261_121
    func next(_ bound: Int) -> Int {
        // xorshift: the same batches on every run.
        seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
        return Int(seed % UInt64(bound))
    }
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    for index in 0..<count {
        var events: [String] = []
        // A client records its events as they happen: a batch is in time order.
        let times = (0..<50).map { _ in now - next(600) }.sorted()
        for ts in times.map(Timestamp.format) {
            let entry = ["universalLink", "scheme", "push", "inApp"][next(4)]
            let route = next(20) == 0 ? "retired-campaign-\(next(1000))" : routes[next(routes.count)]
            var fields = [#""ts":"\#(ts)""#, #""entry":"\#(entry)""#]
            switch next(10) {
            case 0..<6: fields += [#""outcome":"proceed""#, #""route":"\#(route)""#, #""destination":"\#(destinations[next(destinations.count)])""#]
            case 6..<8: fields += [#""outcome":"gated""#, #""route":"\#(route)""#, #""precondition":"auth""#]
            default:
                let reason = ["malformed", "unknownRoute", "validationFailed", "expired"][next(4)]
                fields += [#""outcome":"notFound""#, #""reason":"\#(reason)""#]
                if reason != "malformed", reason != "unknownRoute" { fields.append(#""route":"\#(route)""#) }
            }
            events.append("{" + fields.joined(separator: ",") + "}")
        }
        let platform = index % 3 == 0 ? "android" : "ios"
        let version = ["5.3.0", "5.2.0"][index % 2]
        let body = #"{"client":{"platform":"\#(platform)","appVersion":"\#(version)","revision":\#(1 + index % 2)},"events":[\#(events.joined(separator: ","))]}"#
        try body.write(toFile: "\(directory)/batch-\(index).json", atomically: true, encoding: .utf8)
    }
}

/// Events per second of `decode` over `bodies` on `threads` threads for `seconds`.
func measure(_ bodies: [Data], threads: Int, seconds: Double, _ decode: @escaping @Sendable (Data) -> Int) -> Double {
    let group = DispatchGroup()
    let totals = UnsafeMutableBufferPointer<Int>.allocate(capacity: threads)
    defer { totals.deallocate() }
    let start = Date()
    for thread in 0..<threads {
        group.enter()
        nonisolated(unsafe) let slot = totals
        Thread {
            var events = 0
            var index = thread
            while Date().timeIntervalSince(start) < seconds {
                for _ in 0..<16 {
                    events += decode(bodies[index % bodies.count])
                    index += 1
                }
            }
            slot[thread] = events
            group.leave()
        }.start()
    }
    group.wait()
    return Double(totals.reduce(0, +)) / Date().timeIntervalSince(start)
}

/// The vocabulary the generated batches were written against.
let vocabulary = Vocabulary(routes: routes, preconditions: ["auth"], appVersions: [.ios: ["5.3.0", "5.2.0"], .android: ["5.3.0"]], latestRevision: 2)

func batches(in directory: String) throws -> [Data] {
    let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }.sorted()
    return try names.map { try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\($0)")) }
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "generate" where arguments.count == 5:
    try generate(directory: arguments[2], count: Int(arguments[3])!, now: Int(arguments[4])!)
case "decode" where arguments.count == 5:
    let bodies = try batches(in: arguments[2])
    let seconds = Double(arguments[3])!, threads = Int(arguments[4])!
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    let decoded = measure(bodies, threads: threads, seconds: seconds) { body in
        (try? decoder.decode(CodableBatch.self, from: body))?.events.count ?? 0
    }
    let parser = BatchParser(vocabulary: vocabulary)
    let now = Int(Date().timeIntervalSince1970)
    let parsed = measure(bodies, threads: threads, seconds: seconds) { body in
        body.withUnsafeBytes { raw in (try? parser.parse(raw.bindMemory(to: UInt8.self), now: now))?.tallies.count ?? 0 }
    }
    print("jsondecoder_events_per_second \(Int(decoded))")
    print("batchparser_events_per_second \(Int(parsed))")
case "parse" where arguments.count == 4:
    let bodies = try batches(in: arguments[2])
    let parser = BatchParser(vocabulary: vocabulary)
    let now = Int(Date().timeIntervalSince1970)
    var accepted = 0
    for _ in 0..<Int(arguments[3])! {
        for body in bodies {
            accepted += body.withUnsafeBytes { raw in (try? parser.parse(raw.bindMemory(to: UInt8.self), now: now))?.tallies.count ?? 0 }
        }
    }
    print("events_accepted \(accepted)")
default:
    FileHandle.standardError.write(Data("usage: TelemetryBench generate DIR COUNT NOW | decode DIR SECONDS THREADS | parse DIR ROUNDS\n".utf8))
    exit(2)
}
