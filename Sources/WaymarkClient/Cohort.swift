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
    /// change cohort; the file is excluded from backups, so a restored device makes its own.
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
        // Made whole in a file of its own, then linked into place, which fails if an id is
        // there already: of two callers at once (the manifest client and the reporter), both
        // get the one that won.
        let id = UUID(), bytes = Data((id.uuidString + "\n").utf8)
        let made = directory.appendingPathComponent(".install-id-\(id.uuidString)")
        guard (try? DurableFile.write(bytes, to: made)) != nil else { return nil }
        defer { try? FileManager.default.removeItem(at: made) }
        if (try? FileManager.default.linkItem(at: made, to: file)) == nil {
            if case .data(let data) = DurableFile.contents(file), let text = String(data: data, encoding: .utf8),
               let existing = UUID(uuidString: text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                return existing
            }
            // A damaged one: replaced.
            guard (try? DurableFile.write(bytes, to: file)) != nil else { return nil }
        }
        DurableFile.excludeFromBackup(file)
        return id
    }
}
