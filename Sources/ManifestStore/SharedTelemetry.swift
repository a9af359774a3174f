/// Telemetry that several nodes count together (`docs/postgres.md`, "Telemetry"): each
/// accepted batch is committed with its id, its count cells and what it offers the rollout
/// guard, and only then answered; a batch sent again, to any node, is counted once.
public protocol SharedTelemetry: Sendable {
    /// Queues one batch for the next commit; `completion` gets true once it was committed
    /// and counted, false when a batch with its `id` was counted before (any node's), or the
    /// error that kept it from being committed (nothing of it was counted). `id` nil: a batch
    /// with no id, counted each time it is sent.
    func submit(id: String?, cells: [String: Int], evidence: String?, completion: @escaping @Sendable (Result<Bool, StoreError>) -> Void)
    /// What accepted batches offered the guard (in commit order, by sequence number), after
    /// `seq`, at most `limit`: every node reads them, so whichever holds the lease looks at
    /// the evidence of the whole fleet.
    func evidence(after seq: Int64, limit: Int) throws(StoreError) -> [(seq: Int64, evidence: String)]
}
