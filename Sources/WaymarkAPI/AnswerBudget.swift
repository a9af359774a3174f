import Synchronization

/// Bytes that answers being made may hold together: a costly answer reserves its estimate
/// before it is built and gives it back once it is serialized, and one that does not fit is
/// answered `503 busy` rather than built. What the reads lane's answers cost in memory is
/// then this budget, not the number of readers times the largest answer.
final class AnswerBudget: Sendable {
    let limit: Int
    private let used = Atomic<Int>(0)

    /// What one value of a counts series costs while its answer is made: the series arrays,
    /// the JSON tree and its serialized bytes (measured by `hostile.py`'s `counts_answer_size`:
    /// 480,000 values peaked 30 MB over the daemon's RSS).
    static let bytesPerValue = 64

    init(limit: Int) {
        self.limit = limit
    }

    var reserved: Int { used.load(ordering: .relaxed) }

    /// Reserves `bytes`; false, with nothing reserved, when they do not fit.
    func reserve(_ bytes: Int) -> Bool {
        var current = used.load(ordering: .relaxed)
        while true {
            guard current + bytes <= limit else { return false }
            let (exchanged, original) = used.compareExchange(expected: current, desired: current + bytes, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
    }

    func release(_ bytes: Int) {
        used.subtract(bytes, ordering: .acquiringAndReleasing)
    }
}
