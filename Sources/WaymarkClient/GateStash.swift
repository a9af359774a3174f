import Foundation
import RouteEngine

/// Where an external link waiting at a gate (the login screen) is kept, so that it survives
/// the app being killed there — by the system while the user fetched a password, or by the
/// user — and is carried out after the next launch's `ready()`, if that comes soon enough.
/// One link at most (the newest waiting one), in one file, written durably; removed as soon
/// as the intent ends, whatever its end. The link may carry personal data: it stays in the
/// app's own directory, for `lifetime` at most.
public struct GateStash: Sendable {
    /// The directory of the stash file (`gate-stash.json`): Application Support, like the cache.
    public var directory: URL
    /// How long a stashed link stays worth resuming (default 10 minutes); older, it is dropped.
    public var lifetime: TimeInterval = 600

    public init(directory: URL, lifetime: TimeInterval = 600) {
        self.directory = directory
        self.lifetime = lifetime
    }

    var file: URL { directory.appendingPathComponent("gate-stash.json") }
    static let format = "waymark-gate-stash/1"

    /// Keeps `link` (arrived by `door`) at `time`.
    func keep(_ link: String, door: Door, at time: Date) {
        let json: JSONValue = ["format": .string(Self.format), "link": .string(link), "door": .string(door.rawValue),
                               "time": .int(Int(time.timeIntervalSince1970))]
        try? DurableFile.write(Data(json.serializedBytes()), to: file)
    }

    func clear() {
        try? FileManager.default.removeItem(at: file)
    }

    /// The stashed intent, if one is there and was kept within `lifetime` of `now`; the file
    /// is removed either way (a link resumed once is not resumed again by a crash loop).
    func take(now: Date) -> Intent? {
        guard let data = DurableFile.read(file) else { return nil }
        clear()
        guard data.count <= 4_096, let json = try? JSONParser().parse([UInt8](data)), json["format"]?.stringValue == Self.format,
              let link = json["link"]?.stringValue, let door = json["door"]?.stringValue.flatMap(Door.init(rawValue:)), door != .inApp,
              let time = json["time"]?.intValue else { return nil }
        let age = now.timeIntervalSince1970 - TimeInterval(time)
        guard age >= -60, age <= lifetime else { return nil }  // a clock set back a little is forgiven
        return .link(link, door: door)
    }
}
