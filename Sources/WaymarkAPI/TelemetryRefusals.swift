import Synchronization

/// What telemetry refused, by reason, since start: whole batches (each code `POST
/// /v1/telemetry` answers 4xx with) and shapes over an allowance, so ops see an attack as a
/// number rather than as a silent dent (`/metrics`, `/v1/telemetry/counts`' `refused`, the
/// dashboard).
final class TelemetryRefusals: Sendable {
    static let batchCodes = ["unsupportedMediaType", "missingBody", "invalidBatch", "invalidClient", "tooManyEvents",
                             "countTooLarge", "batchTooLarge", "droppedTooLarge"]
    private let batches = Mutex([String: UInt64]())

    func refuse(_ code: String) {
        batches.withLock { $0[code, default: 0] += 1 }
    }

    /// Every code, refused or not.
    var byCode: [(code: String, count: UInt64)] {
        let held = batches.withLock { $0 }
        return Self.batchCodes.map { ($0, held[$0] ?? 0) }
    }
}
