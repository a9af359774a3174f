// make bench-events: the event mechanism under HTTPServer, measured against the
// alternative the issue offered. The same echo (64-byte request, 64-byte reply, one in
// flight per connection) runs over socket pairs behind three responders:
//
//   epoll        a thread per core, each with its own epoll set, level-triggered (HTTPServer's design)
//   dispatch-q   a DispatchSource read source per connection on a serial queue per core
//   dispatch-c   a read source per connection on its own queue targeting the global pool
//
// One client thread drives every pair with its own epoll set and is identical for all three.
// Printed: round trips/s and the responder's CPU per round trip (process CPU minus the
// client thread's), median of interleaved rounds.
import Dispatch
import Foundation
import CSystemShim
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

let environment = ProcessInfo.processInfo.environment
let connectionCount = Int(environment["BENCH_CONNECTIONS"] ?? "") ?? 64
let duration = Double(environment["BENCH_DURATION"] ?? "") ?? 3
let rounds = Int(environment["BENCH_ROUNDS"] ?? "") ?? 5
let cores = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
let messageSize = 64

func fail(_ what: String) -> Never {
    FileHandle.standardError.write("EventDeliveryBench: \(what) failed: \(String(cString: strerror(errno)))\n".data(using: .utf8)!)
    exit(1)
}

func makePairs(_ count: Int) -> [(responder: Int32, client: Int32)] {
    (0..<count).map { _ in
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            fail("socketpair")
        }
        return (fds[0], fds[1])
    }
}

/// Reads what is there and writes it back: the responder's whole job, the same in all three.
/// Returns false at end of stream.
@inline(__always)
func echo(_ fd: Int32, _ buffer: UnsafeMutableRawPointer) -> Bool {
    let count = read(fd, buffer, 4096)
    if count == 0 { return false }
    if count < 0 { return errno == EAGAIN || errno == EINTR }
    var sent = 0
    while sent < count {
        let written = write(fd, buffer + sent, count - sent)
        if written < 0 { if errno == EAGAIN || errno == EINTR { continue }; return false }
        sent += written
    }
    return true
}

protocol Responder: AnyObject {
    init(_ fds: [Int32])
    func stop()
}

final class EpollResponder: Responder, @unchecked Sendable {
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchGroup()

    init(_ fds: [Int32]) {
        for thread in 0..<cores {
            let mine = stride(from: thread, to: fds.count, by: cores).map { fds[$0] }
            finished.enter()
            Thread { [self] in
                let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
                for fd in mine { _ = waymark_epoll_ctl(epoll, EPOLL_CTL_ADD, fd, EPOLLIN.rawValue, UInt64(UInt32(bitPattern: fd))) }
                var events = [UInt32](repeating: 0, count: 256)
                var data = [UInt64](repeating: 0, count: 256)
                let buffer = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16)
                while !stopping.load(ordering: .relaxed) {
                    let ready = waymark_epoll_wait(epoll, &events, &data, 256, 50)
                    for slot in 0..<Int(max(0, ready)) {
                        let fd = Int32(truncatingIfNeeded: data[slot])
                        if !echo(fd, buffer) { _ = waymark_epoll_ctl(epoll, EPOLL_CTL_DEL, fd, 0, 0) }
                    }
                }
                buffer.deallocate()
                close(epoll)
                finished.leave()
            }.start()
        }
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        finished.wait()
    }
}

/// A read source per connection. `perCoreQueues`: sources share a serial queue per core
/// (a loop per core, Dispatch-style); otherwise each has its own queue on the global pool.
class DispatchResponder: Responder, @unchecked Sendable {
    class var perCoreQueues: Bool { true }
    private var sources: [any DispatchSourceRead] = []
    private let cancelled = DispatchGroup()

    required init(_ fds: [Int32]) {
        let shared = (0..<cores).map { DispatchQueue(label: "responder-\($0)") }
        for (index, fd) in fds.enumerated() {
            let queue = Self.perCoreQueues ? shared[index % cores] : DispatchQueue(label: "connection-\(index)", target: .global())
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16)
            cancelled.enter()
            // Sources are cancelled (stop) before the client ends close, so no EOF spins here.
            source.setEventHandler { _ = echo(fd, buffer) }
            source.setCancelHandler { [cancelled] in
                buffer.deallocate()
                cancelled.leave()
            }
            source.resume()
            sources.append(source)
        }
    }

    func stop() {
        for source in sources { source.cancel() }
        cancelled.wait()
    }
}

final class DispatchPerConnectionResponder: DispatchResponder, @unchecked Sendable {
    override class var perCoreQueues: Bool { false }
}

/// Drives every pair from one thread: one message in flight per connection.
/// Returns (round trips, this thread's CPU seconds).
func drive(_ fds: [Int32], seconds: Double) -> (roundTrips: Int, cpu: Double) {
    let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
    defer { close(epoll) }
    let message = [UInt8](repeating: UInt8(ascii: "x"), count: messageSize)
    var pending = [Int32: Int]()
    for fd in fds {
        _ = waymark_epoll_ctl(epoll, EPOLL_CTL_ADD, fd, EPOLLIN.rawValue, UInt64(UInt32(bitPattern: fd)))
        guard write(fd, message, messageSize) == messageSize else { fail("write") }
        pending[fd] = messageSize
    }
    var events = [UInt32](repeating: 0, count: 256)
    var data = [UInt64](repeating: 0, count: 256)
    var buffer = [UInt8](repeating: 0, count: 4096)
    var roundTrips = 0
    let start = DispatchTime.now().uptimeNanoseconds
    let end = start + UInt64(seconds * 1e9)
    var iterations = 0
    while true {
        iterations += 1
        if iterations & 15 == 0, DispatchTime.now().uptimeNanoseconds >= end { break }
        let ready = waymark_epoll_wait(epoll, &events, &data, 256, 50)
        for slot in 0..<Int(max(0, ready)) {
            let fd = Int32(truncatingIfNeeded: data[slot])
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { continue }
            var left = pending[fd]! - count
            while left <= 0 {
                roundTrips += 1
                guard write(fd, message, messageSize) == messageSize else { fail("write") }
                left += messageSize
            }
            pending[fd] = left
        }
    }
    // Let the replies still in flight arrive so the next round starts clean.
    var quiet = 0
    while quiet < 3 {
        let ready = waymark_epoll_wait(epoll, &events, &data, 256, 20)
        if ready <= 0 { quiet += 1; continue }
        for slot in 0..<Int(ready) { _ = read(Int32(truncatingIfNeeded: data[slot]), &buffer, buffer.count) }
    }
    return (roundTrips, threadCPU())
}

func cpuSeconds(_ who: Int32) -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(who), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func threadCPU() -> Double { cpuSeconds(1) }  // RUSAGE_THREAD

struct Measurement {
    var rate: Double
    var cpuMicrosecondsPerRoundTrip: Double
}

/// One round: fresh pairs, a responder, the client for `duration` on a thread of its own.
func measure(_ kind: Responder.Type) -> Measurement {
    let pairs = makePairs(connectionCount)
    let responder = kind.init(pairs.map(\.responder))
    let processBefore = cpuSeconds(RUSAGE_SELF.rawValue)
    let outcome = Mutex<(Int, Double)>((0, 0))
    let done = DispatchSemaphore(value: 0)
    let started = DispatchTime.now().uptimeNanoseconds
    Thread {
        let result = drive(pairs.map(\.client), seconds: duration)
        outcome.withLock { $0 = (result.roundTrips, result.cpu) }
        done.signal()
    }.start()
    done.wait()
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    let processCPU = cpuSeconds(RUSAGE_SELF.rawValue) - processBefore
    responder.stop()
    for pair in pairs {
        close(pair.client)
        close(pair.responder)
    }
    let (roundTrips, clientCPU) = outcome.withLock { $0 }
    return Measurement(
        rate: Double(roundTrips) / elapsed,
        cpuMicrosecondsPerRoundTrip: (processCPU - clientCPU) * 1e6 / Double(max(1, roundTrips)))
}

let kinds: [(String, Responder.Type)] = [
    ("epoll", EpollResponder.self),
    ("dispatch-q", DispatchResponder.self),
    ("dispatch-c", DispatchPerConnectionResponder.self),
]
print("EventDeliveryBench: \(connectionCount) socket pairs, \(messageSize)-byte echo, one in flight each, \(cores) cores, \(rounds) interleaved rounds of \(duration) s")
var results: [String: [Measurement]] = [:]
_ = measure(EpollResponder.self)  // warm-up
for _ in 0..<rounds {
    for (name, kind) in kinds { results[name, default: []].append(measure(kind)) }
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let epollRate = median(results["epoll"]!.map(\.rate))
print("  responder     round trips/s   responder CPU µs/round trip   rate vs epoll")
for (name, _) in kinds {
    let rate = median(results[name]!.map(\.rate))
    let cpu = median(results[name]!.map(\.cpuMicrosecondsPerRoundTrip))
    print("  " + name.padding(toLength: 12, withPad: " ", startingAt: 0)
        + String(format: "%15.0f   %27.2f   %13.2f", rate, cpu, rate / epollRate))
}
