import Foundation

/// The first tap on a new campaign works: a launch may wait for the first refresh, and a
/// link that found no route in a table a refresh in flight may replace is tried again once
/// it lands (both bounded).
extension ManifestClient {
    /// The table in use after the first refresh of this run, waiting for it at most
    /// `seconds` (a refresh is started, or the one in flight joined, if none has ended yet).
    /// Past the bound, the table in use then (cache, bundled or empty); the refresh goes on.
    public func tableAfterFirstRefresh(within seconds: TimeInterval) async -> RouteTable {
        if refreshesEnded == 0 {
            _ = await BoundedWait.value(within: seconds) { await self.refresh() }
        }
        return currentTable()
    }

    /// A table newer than `revision`: the one in use if it already is, else the one a refresh
    /// in flight brings within `seconds`; nil when there is none (no refresh in flight, it
    /// failed, brought nothing newer, or took longer).
    public func newerTable(than revision: Int, within seconds: TimeInterval) async -> RouteTable? {
        if currentTable().revision > revision { return currentTable() }
        guard let inFlight = refreshInFlight else { return nil }
        _ = await BoundedWait.value(within: seconds) { await inFlight.value }
        let table = currentTable()
        return table.revision > revision ? table : nil
    }
}

extension ManifestClient {
    /// The log message an outcome makes.
    static func message(for outcome: RefreshOutcome) -> ClientLogMessage {
        switch outcome {
        case .updated(let revision): ClientLogMessage(.info, "manifest", "Revision \(revision) is in use.")
        case .notModified: ClientLogMessage(.debug, "manifest", "The manifest is unchanged.")
        case .olderIgnored(let served, let inUse):
            ClientLogMessage(.warning, "manifest", "The server sent revision \(served), older than \(inUse) in use; kept \(inUse).")
        case .rejected(let error): ClientLogMessage(.error, "manifest", "A manifest was refused (\(error.kind.rawValue)); the last good table stays.")
        case .unauthorized(let status): ClientLogMessage(.error, "manifest", "The manifest token was refused (\(status)).")
        case .failed(let status, _): ClientLogMessage(.warning, "manifest", "The server answered \(status); retried after the backoff.")
        case .unreachable: ClientLogMessage(.warning, "manifest", "The server could not be reached; retried after the backoff.")
        }
    }
}
