import Dispatch
import HTTPCore
import HTTPServer
import Synchronization
import SystemIO

/// Whose document job runs next, and how many run at once: at most `atOnce` jobs are started;
/// the rest wait, without a thread, in one first-come queue per holder (a token), and the
/// holders whose jobs wait take turns, one job each, the holder whose job just ended last.
/// A started job is given what starts the next, to call once when it ends.
final class DocumentTurns: Sendable {
    typealias Start = @Sendable (_ next: @escaping @Sendable () -> Void) -> Void

    private struct State {
        var running = 0
        var waiting: [String: [Start]] = [:]
        /// Holders with jobs waiting, in the order of their turns.
        var turns: [String] = []
    }

    let atOnce: Int
    private let state = Mutex(State())

    init(atOnce: Int) { self.atOnce = atOnce }

    /// Starts `start` now if fewer than `atOnce` run, else when its holder's turn comes.
    func enqueue(for holder: String, _ start: @escaping Start) {
        let now = state.withLock { state -> Bool in
            if state.running < atOnce {
                state.running += 1
                return true
            }
            if state.waiting[holder] == nil { state.turns.append(holder) }
            state.waiting[holder, default: []].append(start)
            return false
        }
        if now { start { [self] in next(after: holder) } }
    }

    /// A job of `finished`'s ended: the first waiting job of the holder whose turn it is
    /// starts in its place. The holder whose job just ran goes behind the others that wait,
    /// so another's change waits for the one running, not also for the next of its.
    private func next(after finished: String) {
        let following = state.withLock { state -> (String, Start)? in
            guard !state.turns.isEmpty else {
                state.running -= 1
                return nil
            }
            if state.turns.count > 1, state.turns[0] == finished { state.turns.append(state.turns.removeFirst()) }
            let holder = state.turns.removeFirst()
            var queue = state.waiting[holder] ?? []
            let start = queue.removeFirst()
            if queue.isEmpty {
                state.waiting[holder] = nil
            } else {
                state.waiting[holder] = queue
                state.turns.append(holder)
            }
            return (holder, start)
        }
        if let (holder, start) = following { start { [self] in next(after: holder) } }
    }
}
