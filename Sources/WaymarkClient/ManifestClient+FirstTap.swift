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
