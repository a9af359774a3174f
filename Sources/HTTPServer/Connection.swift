import SystemIO
import HTTPCore

/// The I/O shell around one `ConnectionStateMachine`: reads, calls the router for each
/// `.handle`, queues serialized responses, writes. Owned and touched by one event loop only
/// (hence its fields' `@exclusivity(unchecked)`: see `EventLoop`).
final class Connection {
    let fd: Int32
    @exclusivity(unchecked) var machine: ConnectionStateMachine
    /// Output not yet written, in order: small pieces are coalesced into one buffer;
    /// large bodies stay the handler's own (shared, immutable) arrays and are never copied,
    /// and a body with a `BodyFile` is sent from the file.
    @exclusivity(unchecked) private var segments: [Segment] = []
    /// A written head buffer kept, emptied, for the next response's head: a connection
    /// serving request after request allocates its output buffer once.
    @exclusivity(unchecked) private var spare: [UInt8] = []
    /// Bytes of `segments[0]` already written.
    @exclusivity(unchecked) private var firstOffset = 0
    /// False once the loop has closed it: its descriptor number may then already belong to
    /// another socket (or a memory file) opened on any thread, so nothing may touch it again.
    @exclusivity(unchecked) var isOpen = true
    @exclusivity(unchecked) private(set) var isWatchingWrites = false
    @exclusivity(unchecked) private(set) var isWatchingReads = true

    enum Segment {
        case bytes([UInt8])
        case file(BodyFile)

        var count: Int {
            switch self {
            case .bytes(let bytes): bytes.count
            case .file(let file): file.count
            }
        }
    }

    /// Bodies at least this large are queued by reference rather than copied.
    static let shareThreshold = 8 * 1024

    /// Who it comes from, when the per-peer cap counted it (released on close).
    let peer: PeerAddress?
    /// Where its large bodies' (and its answers queued behind unwritten ones') output is
    /// counted (nil: nowhere), and how much of it is not written yet (written bytes are
    /// taken from it first, whatever they were).
    private let outputBudget: OutputBudget?
    @exclusivity(unchecked) private(set) var budgeted = 0

    init(fd: Int32, machine: ConnectionStateMachine, peer: PeerAddress? = nil, outputBudget: OutputBudget? = nil) {
        self.fd = fd
        self.machine = machine
        self.peer = peer
        self.outputBudget = outputBudget
    }

    var hasPendingOutput: Bool { !segments.isEmpty }

    /// Gives back what its unwritten output counts in the budget (the connection closes).
    func releaseOutput() {
        outputBudget?.remove(budgeted, for: peer)
        budgeted = 0
    }

    /// Queues bytes to write, copying small ones into the last buffer.
    func enqueue(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        if bytes.count < Self.shareThreshold, var last = takeOpenBuffer() {
            last.append(contentsOf: bytes)
            segments.append(.bytes(last))
        } else {
            segments.append(.bytes(bytes))
        }
    }

    /// Queues a body to be sent from its file (`BodyFile`), after what is queued.
    func enqueue(_ file: BodyFile) {
        guard file.count > 0 else { return }
        segments.append(.file(file))
    }

    /// The last queued buffer, taken off the queue, if more small output may be added to
    /// it: a buffer (not a shared body or a file) under `shareThreshold`, not partly written.
    private func takeOpenBuffer() -> [UInt8]? {
        guard let last = segments.indices.last, !(last == 0 && firstOffset > 0),
              case .bytes(let buffer) = segments[last], buffer.count < Self.shareThreshold else { return nil }
        segments.removeLast()
        return buffer
    }

    /// Serializes into the output and returns the bytes added.
    func enqueue(serialize: (inout [UInt8]) -> Void) -> Int {
        var head: [UInt8]
        if let open = takeOpenBuffer() {
            head = open
        } else {
            head = spare
            spare = []
        }
        // Room for a head (and a small body) at once, rather than growing it append by append.
        head.reserveCapacity(head.count + 512)
        let before = head.count
        serialize(&head)
        let added = head.count - before
        segments.append(.bytes(head))
        return added
    }

    /// Counts `bytes` just queued in the output budget: a body of `shareThreshold` or more,
    /// or a whole answer queued behind output not yet written (a client pipelining without
    /// reading: 600 such connections of small answers once held 700 MB). A small answer
    /// to a client that reads — most of them, written at once — costs the budget nothing,
    /// not even a lock.
    func countQueued(_ bytes: Int) {
        guard let outputBudget else { return }
        budgeted += bytes
        outputBudget.add(bytes, for: peer)
    }

    /// Writes as much queued output as the socket takes, two buffers per call (a
    /// response's head and its body), or a head and then its file; returns the bytes written.
    func flush() throws(IOError) -> Int {
        var written = 0
        while !segments.isEmpty {
            let offset = firstOffset
            let attempt: Result<IOResult<Int>, IOError>
            switch segments[0] {
            case .file(let file):
                attempt = Result { () throws(IOError) in try Socket.sendFile(fd, file.descriptor, from: offset, count: file.count - offset) }
            case .bytes(let first):
                if segments.count >= 2, case .bytes(let second) = segments[1] {
                    attempt = first.withUnsafeBytes { first in
                        second.withUnsafeBytes { second in
                            Result { () throws(IOError) in try Socket.send(fd, UnsafeRawBufferPointer(rebasing: first[offset...]), second) }
                        }
                    }
                } else {
                    // A head before a file is held back until the file's first bytes join it.
                    let beforeFile = segments.count >= 2
                    attempt = first.withUnsafeBytes { first in
                        Result { () throws(IOError) in try Socket.send(fd, UnsafeRawBufferPointer(rebasing: first[offset...]), more: beforeFile) }
                    }
                }
            }
            guard case .processed(var count) = try attempt.get() else { return written }
            // sendfile(2) sends nothing only at the file's end: never here (each file has
            // bytes left while queued); a socket that takes none says EAGAIN instead.
            guard count > 0 else { return written }
            written += count
            if let outputBudget, budgeted > 0 {
                let counted = min(count, budgeted)
                budgeted -= counted
                outputBudget.remove(counted, for: peer)
            }
            // Drop what was fully written; keep the offset into the first remaining segment.
            while count > 0, !segments.isEmpty {
                let remaining = segments[0].count - firstOffset
                if count >= remaining {
                    count -= remaining
                    let done = segments.removeFirst()
                    firstOffset = 0
                    // A head buffer of ordinary size is kept; a large one (or a shared body or a file) is let go.
                    if spare.capacity == 0, case .bytes(var buffer) = consume done, buffer.capacity <= 4096 {
                        buffer.removeAll(keepingCapacity: true)
                        spare = buffer
                    }
                } else {
                    firstOffset += count
                    count = 0
                }
            }
        }
        return written
    }

    func setWatching(reads: Bool, writes: Bool) {
        isWatchingReads = reads
        isWatchingWrites = writes
    }
}
