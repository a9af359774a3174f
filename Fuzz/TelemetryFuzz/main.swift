// libFuzzer target for the telemetry batch parser (`make fuzz`): the body of
// POST /v1/telemetry, read with unaligned word loads, names matched in place and escaped
// strings decoded into a scratch space, all of it from untrusted bytes.
//
// Only declarations: built with -parse-as-library for fuzzing, libFuzzer supplies `main`
// (and replays files given to it: `.build-fuzz/debug/TelemetryFuzz crash-1234`); an
// ordinary build makes a program that does nothing.
import Telemetry

/// The vocabulary of the corpus's batches, and a clock they fall within.
let vocabulary = Vocabulary(routes: ["home", "product", "orders", "héllo", "spring-sale"], preconditions: ["auth"],
                            appVersions: [.ios: ["5.3.0"], .android: ["5.3.0", "5.2.1"]], latestRevision: 7)
let now = 1_795_262_400  // 2026-11-21T12:00:00Z
let parser: BatchParser = {
    var limits = TelemetryLimits()
    limits.maximumEvents = 64
    return BatchParser(vocabulary: vocabulary, limits: limits)
}()

/// Property: whatever the bytes, parsing never traps or touches memory it does not own
/// (AddressSanitizer), and a batch it accepts is consistent: at most the event limit,
/// rejections in index order, every name slot one the batch lists.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    // A copy of exactly `count` bytes, so a read past the end is a read past an allocation.
    let body = Array(UnsafeBufferPointer(start: start, count: count))
    guard let batch = try? parser.parse(body, now: now) else { return 0 }
    precondition(batch.tallies.count + batch.rejected.count <= parser.limits.maximumEvents)
    precondition(zip(batch.rejected, batch.rejected.dropFirst()).allSatisfy { $0.index < $1.index })
    for tally in batch.tallies {
        precondition(Int(tally.route) < batch.routes.count + 2 && Int(tally.precondition) < batch.preconditions.count + 2)
        precondition(tally.count >= 1 && Int(tally.count) <= parser.limits.maximumCount)
    }
    for name in batch.routes { precondition(name.withUnsafeBufferPointer { vocabulary.routes.index(of: $0) } != nil) }
    return 0
}
