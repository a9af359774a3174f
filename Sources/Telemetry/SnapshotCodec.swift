import LinkShapes

/// The counts as a file: `WMTSNAP4`, the last sequence, the interned names, the buckets,
/// the followers' forwards applied, on a follower the counts not yet forwarded, the ids of
/// accepted batches (`[u32 count]`, then each `[u64][u64][u32 minute]`, oldest first), then
/// a CRC-32C of all that. `WMTSNAP3` files (no batch ids), `WMTSNAP2` files (keys in layout
/// 1, `CountKey.fromLayout1`) and `WMTSNAP1` files (layout 1, no forwards, nothing
/// outgoing) are still read.
enum SnapshotCodec {
    static let magic = Array("WMTSNAP4".utf8)
    static let thirdMagic = Array("WMTSNAP3".utf8)
    static let secondMagic = Array("WMTSNAP2".utf8)
    static let firstMagic = Array("WMTSNAP1".utf8)

    /// `withShapes: false` writes the body as formats 1 and 2 had it (for their tests).
    static func encode(_ counts: Counts, outgoing: Outgoing? = nil, withShapes: Bool = true) -> [UInt8] {
        var writer = ByteWriter()
        writer.bytes.append(contentsOf: magic)
        encodeBody(counts, into: &writer, withShapes: withShapes)
        writer.u32(UInt32(counts.forwarded.count))
        for (node, through) in counts.forwarded.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            writer.name(node)
            writer.u64(through)
        }
        writer.u8(outgoing == nil ? 0 : 1)
        if let outgoing {
            writer.u64(outgoing.after)
            encodeBody(outgoing.pending, into: &writer, withShapes: withShapes)
        }
        if withShapes {
            writer.u32(UInt32(counts.batchIDs.count))
            for entry in counts.batchIDs.entries {
                writer.u64(entry.id.high)
                writer.u64(entry.id.low)
                writer.u32(UInt32(bitPattern: entry.minute))
            }
        }
        writer.u32(writer.bytes.withUnsafeBytes(CRC32C.checksum))
        return writer.bytes
    }

    private static func encodeBody(_ counts: Counts, into writer: inout ByteWriter, withShapes: Bool) {
        writer.u64(counts.lastSequence)
        for interner in [counts.routes, counts.preconditions, counts.appVersions] {
            writer.u32(UInt32(interner.interned.count))
            for name in interner.interned { writer.name(name) }
        }
        for buckets in [counts.minutes, counts.hours] {
            writer.u32(UInt32(buckets.count))
            for (bucket, keys) in buckets.sorted(by: { $0.key < $1.key }) {
                writer.u32(UInt32(bitPattern: bucket))
                writer.u32(UInt32(keys.count))
                for (key, count) in keys {
                    writer.u64(key)
                    writer.u64(count)
                }
            }
        }
        // The unknown-link shapes (WMTSNAP3 on): the sketch's total, then each held shape;
        // WMTSNAP4: the window's first minute, then both windows so, each shape with its sources.
        guard withShapes else { return }
        writer.u32(UInt32(bitPattern: counts.shapes.windowStart))
        for sketch in [counts.shapes.current, counts.shapes.previous] {
            writer.u64(sketch.total)
            writer.u32(UInt32(sketch.count))
            for entry in sketch.entries {
                writer.name(Array(entry.key.utf8))
                writer.u64(entry.count)
                writer.u64(entry.error)
                writer.u32(UInt32(bitPattern: entry.note.firstMinute))
                writer.u32(UInt32(bitPattern: entry.note.lastMinute))
                writer.u8(entry.note.platforms)
                writer.u8(entry.note.entries)
                writer.u8(UInt8(entry.note.sources.count))
                for source in entry.note.sources { writer.u32(source) }
            }
        }
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, limits: TelemetryLimits) -> Counts? {
        decodeWithOutgoing(bytes, limits: limits)?.counts
    }

    static func decodeWithOutgoing(_ bytes: UnsafeRawBufferPointer, limits: TelemetryLimits) -> (counts: Counts, outgoing: Outgoing?)? {
        guard bytes.count >= magic.count + 12 else { return nil }
        let first = bytes.prefix(magic.count).elementsEqual(firstMagic)
        let layout1 = first || bytes.prefix(magic.count).elementsEqual(secondMagic)
        let third = bytes.prefix(magic.count).elementsEqual(thirdMagic)
        guard layout1 || third || bytes.prefix(magic.count).elementsEqual(magic) else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: bytes[0..<bytes.count - 4])
        var trailer = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - 4)...]))
        guard trailer.u32() == CRC32C.checksum(body) else { return nil }
        var reader = ByteReader(body)
        reader.offset = magic.count
        guard var counts = decodeBody(&reader, limits: limits, layout1: layout1, windowed: !layout1 && !third) else { return nil }
        var outgoing: Outgoing?
        if !first {
            guard let followers = reader.u32() else { return nil }
            for _ in 0..<followers {
                guard let node = reader.name(), let through = reader.u64() else { return nil }
                counts.forwarded[node] = through
            }
            guard let hasOutgoing = reader.u8(), hasOutgoing <= 1 else { return nil }
            if hasOutgoing == 1 {
                guard let after = reader.u64(), let pending = decodeBody(&reader, limits: limits, layout1: layout1, windowed: !layout1 && !third) else { return nil }
                outgoing = Outgoing(pending: pending, after: after)
            }
        }
        if !layout1, !third {
            guard let held = reader.u32(), reader.remaining >= Int(held) * 20 else { return nil }
            for _ in 0..<held {
                counts.batchIDs.insert(HexID(high: reader.u64()!, low: reader.u64()!), minute: Int32(bitPattern: reader.u32()!))
            }
        }
        guard reader.remaining == 0 else { return nil }
        return (counts, outgoing)
    }

    /// `layout1`: the keys are packed as before platform `other` and entry `web` (converted).
    /// `windowed`: WMTSNAP4's two windows of shapes with their sources (else WMTSNAP3's one sketch).
    private static func decodeBody(_ reader: inout ByteReader, limits: TelemetryLimits, layout1: Bool, windowed: Bool) -> Counts? {
        var counts = Counts(limits: limits)
        guard let sequence = reader.u64() else { return nil }
        counts.lastSequence = sequence
        for path in [\Counts.routes, \Counts.preconditions, \Counts.appVersions] as [WritableKeyPath<Counts, Interner>] {
            guard let count = reader.u32() else { return nil }
            for _ in 0..<count {
                guard let name = reader.name() else { return nil }
                counts[keyPath: path].restore(name)
            }
        }
        for path in [\Counts.minutes, \Counts.hours] as [WritableKeyPath<Counts, [Int32: CountTable]>] {
            guard let bucketCount = reader.u32() else { return nil }
            for _ in 0..<bucketCount {
                guard let bucket = reader.u32(), let keyCount = reader.u32(), reader.remaining >= Int(keyCount) * 16 else { return nil }
                var keys = CountTable(minimumCapacity: Int(keyCount))
                for _ in 0..<keyCount {
                    let stored = reader.u64()!, count = reader.u64()!
                    guard let key = layout1 ? CountKey.fromLayout1(stored) : stored else { return nil }
                    guard count > 0, keys[key] == 0 else { return nil }  // every stored count is positive, every key once
                    keys.add(key, count)
                }
                counts[keyPath: path][Int32(bitPattern: bucket)] = keys
            }
        }
        if !layout1 {
            var sketches: [HeavyHitters<String, ShapeNote>] = []
            if windowed {
                guard let start = reader.u32() else { return nil }
                counts.shapes.windowStart = Int32(bitPattern: start)
            }
            for _ in 0..<(windowed ? 2 : 1) {
                var sketch = HeavyHitters<String, ShapeNote>(capacity: counts.shapes.capacity)
                guard let total = reader.u64(), let held = reader.u32(), Int(held) <= sketch.capacity else { return nil }
                for _ in 0..<held {
                    guard let key = reader.name(), let count = reader.u64(), let error = reader.u64(), let first = reader.u32(), let last = reader.u32(),
                          let platforms = reader.u8(), let entries = reader.u8() else { return nil }
                    var sources: [UInt32] = []
                    if windowed {
                        guard let held = reader.u8(), Int(held) <= ShapeSketch.maximumSources else { return nil }
                        for _ in 0..<held {
                            guard let source = reader.u32() else { return nil }
                            sources.append(source)
                        }
                    }
                    sketch.restore(.init(key: String(decoding: key, as: UTF8.self), count: count, error: error,
                                         note: ShapeNote(firstMinute: Int32(bitPattern: first), lastMinute: Int32(bitPattern: last),
                                                         platforms: platforms, entries: entries, sources: sources)))
                }
                sketch.restoreTotal(total)
                sketches.append(sketch)
            }
            counts.shapes.current = sketches[0]
            if windowed {
                counts.shapes.previous = sketches[1]
            } else {
                // One sketch of no window (WMTSNAP3): the current window is the day it was last offered in.
                let last = sketches[0].entries.map(\.note.lastMinute).max() ?? 0
                counts.shapes.windowStart = last - ((last % ShapeSketch.window) + ShapeSketch.window) % ShapeSketch.window
            }
        }
        counts.recountCells()
        counts.noteRouteUses()
        return counts
    }
}

/// On a follower: the counts accepted since its last sealed forward (everything after the
/// log sequence `after`), waiting to become the next `Forward`.
struct Outgoing: Sendable {
    var pending: Counts
    var after: UInt64
}
