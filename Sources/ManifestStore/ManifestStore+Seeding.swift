import CivilDate
import Foundation
import Rollout
import RouteEngine
import Synchronization
import SystemIO

/// The tokens of a data directory opened beside a running daemon, and seeding an empty
/// store from a directory of schemas and routes.
extension ManifestStore {
    /// The tokens of the data directory at `path` for `waymark token`, which may run while a
    /// daemon serves the directory (see `TokenStore`). Creates the directory if missing.
    public static func openTokens(at path: String) throws(StoreError) -> TokenStore {
        try TokenStore(directory: onDisk { () throws(IOError) in try DataDirectory(path: path, subdirectories: [], exclusive: false) })
    }

    // MARK: Seeding

    /// On a store with no revisions: registers every `schema-*.json` in `seedDirectory` not
    /// registered yet and publishes its `routes.json` as revision 1, through the same
    /// checks as any publish. Returns false when the store already had revisions.
    @discardableResult
    public func seedIfEmpty(from seedDirectory: String, now: Date = Date()) throws(StoreError) -> Bool {
        guard snapshot.current == nil else { return false }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: seedDirectory).sorted()
        } catch {
            throw StoreError.badSeed("Cannot read the seed directory \(seedDirectory): \(error.localizedDescription)")
        }
        for name in names where name.hasPrefix("schema-") && name.hasSuffix(".json") {
            let bytes = try readSeed(seedDirectory + "/" + name)
            switch try registerSchema(bytes, expected: nil, author: "seed", now: now) {
            case .registered: break
            case .invalid(let problems):
                throw StoreError.badSeed("The seed schema \(name) is invalid: \(problems.map(\.message).joined(separator: "; "))")
            case .wrongApp(let app): throw StoreError.badSeed("The seed schema \(name) is not for the app \(app).")
            case .keyMismatch: break
            }
        }
        let routes = try readSeed(seedDirectory + "/routes.json")
        switch try publish(routes: routes, base: nil, author: "seed", message: "Seeded from \(seedDirectory)", now: now) {
        case .published: return true
        case .unchanged: return false
        case .invalid(let report):
            throw StoreError.badSeed("The seed routes \(seedDirectory)/routes.json are invalid: \(report.errors.map(\.message).joined(separator: "; "))")
        case .staleBase, .unknownRevision, .rolloutInProgress, .stableOverRollout: return false  // published concurrently: nothing to seed
        }
    }

    private func readSeed(_ path: String) throws(StoreError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw StoreError.badSeed("Cannot read the seed file \(path).") }
        return [UInt8](data)
    }
}
