import HTTPCore

/// The I/O shell around one `ConnectionStateMachine`: reads, calls the router for each
/// `.handle`, queues serialized responses, writes. Owned and touched by one event loop only.
final class Connection {
    let fd: Int32
    var machine: ConnectionStateMachine
    /// Serialized responses not yet written, from `outputOffset`.
    private var output: [UInt8] = []
    private var outputOffset = 0
    private(set) var isWatchingWrites = false
    private(set) var isWatchingReads = true

    init(fd: Int32, machine: ConnectionStateMachine) {
        self.fd = fd
        self.machine = machine
    }

    var hasPendingOutput: Bool { outputOffset < output.count }

    /// Queues bytes to write.
    func enqueue(_ bytes: [UInt8]) {
        if outputOffset == output.count {
            output.removeAll(keepingCapacity: true)
            outputOffset = 0
        }
        output.append(contentsOf: bytes)
    }

    func enqueue(serialize: (inout [UInt8]) -> Void) -> Int {
        if outputOffset == output.count {
            output.removeAll(keepingCapacity: true)
            outputOffset = 0
        }
        let before = output.count
        serialize(&output)
        return output.count - before
    }

    /// Writes as much queued output as the socket takes; returns the bytes written.
    func flush() throws(SystemError) -> Int {
        var written = 0
        while outputOffset < output.count {
            let offset = outputOffset
            let attempt = output.withUnsafeBytes { bytes in
                Result { () throws(SystemError) in try Socket.send(fd, UnsafeRawBufferPointer(rebasing: bytes[offset...])) }
            }
            switch try attempt.get() {
            case .processed(let count):
                outputOffset += count
                written += count
            case .wouldBlock:
                return written
            }
        }
        if output.count > 64 * 1024 {
            output = []  // do not keep a large buffer for an idle connection
            outputOffset = 0
        }
        return written
    }

    func setWatching(reads: Bool, writes: Bool) {
        isWatchingReads = reads
        isWatchingWrites = writes
    }
}
