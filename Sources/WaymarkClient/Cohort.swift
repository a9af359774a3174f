import Foundation

/// The install's cohort, 0…99, which a staged rollout uses to choose between its candidate
/// and the stable revision (docs/rollouts.md). Derived from a random per-install id, so
/// installs spread evenly and each keeps its cohort: the first 32 bits of the id's 128,
/// big-endian, unsigned, modulo 100.
public enum Cohort {
    public static func of(installID: UUID) -> Int {
        let bytes = installID.uuid
        let first = UInt32(bytes.0) << 24 | UInt32(bytes.1) << 16 | UInt32(bytes.2) << 8 | UInt32(bytes.3)
        return Int(first % 100)
    }

    /// The install id kept in `directory` (`install-id`, made once with a random UUID and
    /// written durably); nil if it can neither be read nor made — or if it is there and cannot
    /// be read now (before the device's first unlock): never a new id over the install's own.
    /// Keep it where the system does not purge (Application Support on iOS), or installs
    /// change cohort; the directory is excluded from backups, so a restored device makes its own.
    public static func installID(in directory: URL) -> UUID? {
        let file = directory.appendingPathComponent("install-id")
        switch DurableFile.contents(file) {
        case .unreadable: return nil
        case .data(let data):
            if let text = String(data: data, encoding: .utf8), let id = UUID(uuidString: text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                return id
            }
        case .missing: break
        }
        let id = UUID()
        guard (try? DurableFile.write(Data((id.uuidString + "\n").utf8), to: file)) != nil else { return nil }
        return id
    }
}
