import LinkShapes

/// Unknown links by shape in fixed memory, windowed so that a flood leaves: two Space-Saving
/// sketches (`HeavyHitters`) of one UTC day each, the current one and the one before; a new
/// day's first shape moves the current one back and starts an empty one, so what was offered
/// two days ago is gone. The list reads both, ranked by the lower bound of their counts
/// (count − error), then by the distinct sources seen (each shape remembers up to
/// `maximumSources` of them, as hashes).
public struct ShapeSketch: Sendable {
    public typealias Entry = HeavyHitters<String, ShapeNote>.Entry

    /// A window, in minutes.
    public static let window: Int32 = 1_440
    public static let maximumSources = 8

    public let capacity: Int
    /// The first minute of the current window (a multiple of `window`).
    public internal(set) var windowStart: Int32 = 0
    var current: HeavyHitters<String, ShapeNote>
    var previous: HeavyHitters<String, ShapeNote>

    public init(capacity: Int) {
        self.capacity = max(1, capacity)
        current = HeavyHitters(capacity: self.capacity)
        previous = HeavyHitters(capacity: self.capacity)
    }

    /// Offers in both windows.
    public var total: UInt64 { current.total &+ previous.total }

    /// Counts `weight` of `shape`, seen in `minute` through `entry` on `platform` from
    /// `source` (a hash; 0: not known), arriving in `arrival` (which window it goes to).
    public mutating func offer(_ shape: String, weight: UInt64, minute: Int32, platform: UInt8, entry: UInt8, source: UInt32, arrival: Int32) {
        rotate(to: arrival)
        let (platformBit, entryBit) = (UInt8(1) << platform, UInt8(1) << entry)
        current.offer(shape, weight: weight,
                      note: { ShapeNote(firstMinute: minute, lastMinute: minute, platforms: platformBit, entries: entryBit, sources: source == 0 ? [] : [source]) },
                      update: { note in
                          note.firstMinute = min(note.firstMinute, minute)
                          note.lastMinute = max(note.lastMinute, minute)
                          note.platforms |= platformBit
                          note.entries |= entryBit
                          if source != 0, note.sources.count < Self.maximumSources, !note.sources.contains(source) { note.sources.append(source) }
                      })
    }

    /// Moves to the window of `minute`, if it is a later one.
    mutating func rotate(to minute: Int32) {
        let start = minute - ((minute % Self.window) + Self.window) % Self.window
        guard start > windowStart else { return }
        previous = start - windowStart == Self.window ? current : HeavyHitters(capacity: capacity)
        current = HeavyHitters(capacity: capacity)
        windowStart = start
    }

    /// Every shape held in either window, merged: counts and errors added (a full window that
    /// does not hold a shape may have counted it up to its smallest count: that goes to the
    /// error), notes joined.
    public var entries: [Entry] {
        func floor(_ sketch: HeavyHitters<String, ShapeNote>) -> UInt64 {
            sketch.count < sketch.capacity ? 0 : sketch.entries.map(\.count).min() ?? 0
        }
        let (currentFloor, previousFloor) = (floor(current), floor(previous))
        var merged: [String: Entry] = [:]
        for entry in previous.entries { merged[entry.key] = Entry(key: entry.key, count: entry.count, error: entry.error + currentFloor, note: entry.note) }
        for entry in current.entries {
            guard var held = merged[entry.key] else {
                merged[entry.key] = Entry(key: entry.key, count: entry.count, error: entry.error + previousFloor, note: entry.note)
                continue
            }
            held.count += entry.count
            held.error = held.error - currentFloor + entry.error
            held.note.firstMinute = min(held.note.firstMinute, entry.note.firstMinute)
            held.note.lastMinute = max(held.note.lastMinute, entry.note.lastMinute)
            held.note.platforms |= entry.note.platforms
            held.note.entries |= entry.note.entries
            for source in entry.note.sources where held.note.sources.count < Self.maximumSources && !held.note.sources.contains(source) {
                held.note.sources.append(source)
            }
            merged[entry.key] = held
        }
        return Array(merged.values)
    }

    /// Shapes held in either window.
    public var count: Int { entries.count }

    /// `ranked(limit)`.
    public func top(_ limit: Int) -> [Entry] { ranked(limit) }

    /// `entries`, best first: by the lower bound of the count, then distinct sources, then shape.
    public func ranked(_ limit: Int) -> [Entry] {
        Array(entries.sorted {
            ($1.count - min($1.error, $1.count), $1.note.sources.count, $0.key) < ($0.count - min($0.error, $0.count), $0.note.sources.count, $1.key)
        }.prefix(max(0, limit)))
    }
}
