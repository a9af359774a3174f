import CSystemShim
import HTTPCore
import Synchronization
import SystemIO

/// The memory files open now and the bytes they hold: shared memory, counted by the
/// process's cgroup but not in its RSS (`waymark_http_body_file_bytes`, docs/operations.md).
public enum BodyFiles {
    static let open = Atomic<Int>(0)
    static let bytes = Atomic<Int>(0)

    public static var openCount: Int { open.load(ordering: .relaxed) }
    public static var heldBytes: Int { bytes.load(ordering: .relaxed) }
}

extension BodyFile {
    /// Whether this process can make memory files and send from them (checked once, through
    /// a socket pair): where it cannot, every body is sent from memory, and the server says
    /// so when it starts. A file that cannot be sent would cut every large answer after its head.
    public static let isAvailable = waymark_sendfile_works() != 0

    /// Bodies smaller than this are sent from memory: below it, the extra system call a
    /// file costs (the head is written first, then the file) outweighs the copy it saves.
    public static let worthwhileBytes = 16 * 1024

    /// `bytes` in a sealed memory file (`memfd_create(2)`), for a body sent many times: the
    /// kernel then takes its pages by reference on each send rather than copying the bytes
    /// from the process, as nginx does for a file with `sendfile on`. Nil below
    /// `worthwhileBytes`, or when the file cannot be made (out of descriptors or memory):
    /// the body is then sent from memory as before. The pages are the process's shared
    /// memory (counted by its cgroup, not in its RSS) until the last response holding the
    /// file lets go.
    public static func holding(_ bytes: [UInt8]) -> BodyFile? {
        guard bytes.count >= worthwhileBytes, isAvailable else { return nil }
        let descriptor = bytes.withUnsafeBytes { waymark_sealed_memory_file($0.baseAddress, $0.count) }
        guard descriptor >= 0 else { return nil }
        let count = bytes.count
        BodyFiles.open.add(1, ordering: .relaxed)
        BodyFiles.bytes.add(count, ordering: .relaxed)
        return BodyFile(descriptor: descriptor, count: count) { descriptor in
            FileSystem.close(descriptor)
            BodyFiles.open.subtract(1, ordering: .relaxed)
            BodyFiles.bytes.subtract(count, ordering: .relaxed)
        }
    }
}
