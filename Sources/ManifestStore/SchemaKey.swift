import CivilDate
import Foundation
import Rollout
import RouteEngine
import Synchronization
import SystemIO

/// Which app build a schema describes.
public struct SchemaKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let platform: String
    public let version: String

    public init(platform: String, version: String) {
        self.platform = platform
        self.version = version
    }

    public var description: String { "\(platform) \(version)" }

    public static func < (a: SchemaKey, b: SchemaKey) -> Bool {
        (a.platform, a.version) < (b.platform, b.version)
    }
}

/// A registered app-build schema.
public struct StoredSchema: Hashable, Sendable {
    public let schema: Schema
    public let bytes: [UInt8]
    public let sha256: String
    public let author: String
    public let time: Date

    public var key: SchemaKey { SchemaKey(platform: schema.platform, version: schema.version) }
}
