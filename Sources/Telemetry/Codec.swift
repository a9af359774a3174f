import LinkShapes
/// The binary forms on disk: log frames (one accepted batch each) and the snapshot of
/// the counts. Little-endian, length-prefixed, each checked by CRC-32C.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }

    /// A name: 16-bit length, then its bytes.
    mutating func name(_ value: [UInt8]) {
        u16(UInt16(clamping: value.count))
        bytes.append(contentsOf: value.prefix(Int(UInt16.max)))
    }
}

struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var remaining: Int { bytes.count - offset }

    private mutating func fixed<T: FixedWidthInteger>(_: T.Type) -> T? {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { return nil }
        var value: T = 0
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + size])) }
        offset += size
        return T(littleEndian: value)
    }

    mutating func u8() -> UInt8? { fixed(UInt8.self) }
    mutating func u16() -> UInt16? { fixed(UInt16.self) }
    mutating func u32() -> UInt32? { fixed(UInt32.self) }
    mutating func u64() -> UInt64? { fixed(UInt64.self) }

    mutating func name() -> [UInt8]? {
        guard let count = u16().map(Int.init), remaining >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }
}

/// CRC-32C (Castagnoli), as ext4 and iSCSI use it: slicing-by-8 (eight bytes per step
/// through eight tables), then a byte at a time for the tail.
enum CRC32C {
    static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for index in 0..<256 {
            var crc = UInt32(index)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[index] = crc
        }
        for index in 0..<256 {
            for table in 1..<8 {
                let previous = tables[(table - 1) * 256 + index]
                tables[table * 256 + index] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        guard let base = bytes.baseAddress else { return 0 }
        var offset = 0
        tables.withUnsafeBufferPointer { t in
            while offset + 8 <= bytes.count {
                let word = UInt64(littleEndian: (base + offset).loadUnaligned(as: UInt64.self)) ^ UInt64(crc)
                crc = t[7 * 256 + Int(word & 0xFF)] ^ t[6 * 256 + Int((word >> 8) & 0xFF)]
                    ^ t[5 * 256 + Int((word >> 16) & 0xFF)] ^ t[4 * 256 + Int((word >> 24) & 0xFF)]
                    ^ t[3 * 256 + Int((word >> 32) & 0xFF)] ^ t[2 * 256 + Int((word >> 40) & 0xFF)]
                    ^ t[1 * 256 + Int((word >> 48) & 0xFF)] ^ t[Int(word >> 56)]
                offset += 8
            }
            while offset < bytes.count {
                crc = t[Int((crc ^ UInt32(bytes[offset])) & 0xFF)] ^ (crc >> 8)
                offset += 1
            }
        }
        return crc ^ 0xFFFF_FFFF
    }
}

/// One accepted batch (or a follower's forward) in the log:
/// `[u32 payload length][u32 CRC-32C of payload][payload]`. A batch's payload starts with
/// its sequence and platform; a forward's with its sequence, `forwardMarker` where the
/// platform would be, then the encoded `Forward`. A batch with unknown-link shapes has
/// `shapesMarker` before its platform and its shapes after its tallies: `[u32 count]`, then
/// each `[u32 minute][u8 entry][u32 count][u16 length][shape]`. A batch with an id has
/// `idMarker`, the id's two words and the minute it was accepted first of all (before the
/// shapes marker); one without an id has `acceptedMarker` and that minute there instead
/// (frames from before either have neither: their minute is unknown, 0).
enum Frame {
    static let forwardMarker: UInt8 = 0xFF
    static let shapesMarker: UInt8 = 0xFE
    static let idMarker: UInt8 = 0xFD
    static let acceptedMarker: UInt8 = 0xFC
    /// In place of `shapesMarker`: each shape is followed by `[u32 source]`.
    static let sourcedShapesMarker: UInt8 = 0xFB

    static func encode(_ forward: Forward, sequence: UInt64, into out: inout [UInt8]) {
        var payload = ByteWriter()
        payload.u64(sequence)
        payload.u8(forwardMarker)
        payload.bytes.append(contentsOf: forward.encoded)
        var header = ByteWriter()
        header.u32(UInt32(payload.bytes.count))
        header.u32(payload.bytes.withUnsafeBytes(CRC32C.checksum))
        out.append(contentsOf: header.bytes)
        out.append(contentsOf: payload.bytes)
    }

    static func encode(_ entry: LogEntry, sequence: UInt64, into out: inout [UInt8]) {
        switch entry {
        case .batch(let batch): encode(batch, sequence: sequence, into: &out)
        case .forward(let forward): encode(forward, sequence: sequence, into: &out)
        }
    }

    static let headerSize = 8
    /// Larger than any batch can encode to; a length past it is damage, not a frame.
    static let maximumPayload = 64 << 20

    static func encode(_ batch: Batch, sequence: UInt64, into out: inout [UInt8]) {
        let names = batch.routes.reduce(0) { $0 + 2 + $1.count } + batch.preconditions.reduce(0) { $0 + 2 + $1.count }
        let shapes = batch.shapes.isEmpty ? 0 : 1 + 4 + batch.shapes.reduce(0) { $0 + 4 + 1 + 4 + 2 + $1.shape.count + 4 }
        let id = batch.id != nil ? 1 + 16 + 4 : batch.acceptedMinute != 0 ? 1 + 4 : 0
        let payload = 8 + id + 1 + 4 + 1 + 2 + (batch.appVersion?.count ?? 0) + 2 + 2 + names + 4 + batch.tallies.count * 15 + shapes
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: headerSize + payload))
        out.withUnsafeMutableBytes { buffer in
            var cursor = Cursor(base: buffer.baseAddress! + start + headerSize)
            cursor.put(sequence)
            if let id = batch.id {
                cursor.put(idMarker)
                cursor.put(id.high)
                cursor.put(id.low)
                cursor.put(UInt32(bitPattern: batch.acceptedMinute))
            } else if batch.acceptedMinute != 0 {
                cursor.put(acceptedMarker)
                cursor.put(UInt32(bitPattern: batch.acceptedMinute))
            }
            if !batch.shapes.isEmpty { cursor.put(sourcedShapesMarker) }
            cursor.put(batch.platform.rawValue)
            cursor.put(batch.revision)
            cursor.put(UInt8(batch.appVersion == nil ? 0 : 1))
            cursor.put(name: batch.appVersion ?? [])
            cursor.put(UInt16(batch.routes.count))
            for name in batch.routes { cursor.put(name: name) }
            cursor.put(UInt16(batch.preconditions.count))
            for name in batch.preconditions { cursor.put(name: name) }
            cursor.put(UInt32(batch.tallies.count))
            for tally in batch.tallies {
                cursor.put(UInt32(bitPattern: tally.minute))
                cursor.put(tally.entry)
                cursor.put(tally.outcome)
                cursor.put(tally.reason)
                cursor.put(tally.route)
                cursor.put(tally.precondition)
                cursor.put(tally.count)
            }
            if !batch.shapes.isEmpty {
                cursor.put(UInt32(batch.shapes.count))
                for shape in batch.shapes {
                    cursor.put(UInt32(bitPattern: shape.minute))
                    cursor.put(shape.entry)
                    cursor.put(shape.count)
                    cursor.put(name: shape.shape)
                    cursor.put(shape.source)
                }
            }
            let body = UnsafeRawBufferPointer(start: buffer.baseAddress! + start + headerSize, count: payload)
            var header = Cursor(base: buffer.baseAddress! + start)
            header.put(UInt32(payload))
            header.put(CRC32C.checksum(body))
        }
    }

    /// Little-endian stores into a buffer sized beforehand.
    private struct Cursor {
        var base: UnsafeMutableRawPointer

        @inline(__always)
        mutating func put<T: FixedWidthInteger>(_ value: T) {
            base.storeBytes(of: value.littleEndian, toByteOffset: 0, as: T.self)
            base += MemoryLayout<T>.size
        }

        mutating func put(name: [UInt8]) {
            put(UInt16(name.count))
            guard !name.isEmpty else { return }
            name.withUnsafeBytes { base.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            base += name.count
        }
    }

    /// A checked payload back to its entry; nil if it does not describe a valid one.
    static func decode(_ payload: UnsafeRawBufferPointer) -> (sequence: UInt64, entry: LogEntry)? {
        var reader = ByteReader(payload)
        var batch = Batch()
        if payload.count > 8, payload[8] == forwardMarker {
            guard let sequence = reader.u64(), case .success(let forward) = Forward.decode(UnsafeRawBufferPointer(rebasing: payload[9...])) else { return nil }
            return (sequence, .forward(forward))
        }
        guard let sequence = reader.u64() else { return nil }
        if reader.remaining > 0, payload[reader.offset] == idMarker {
            reader.offset += 1
            guard let high = reader.u64(), let low = reader.u64(), let minute = reader.u32() else { return nil }
            batch.id = HexID(high: high, low: low)
            batch.acceptedMinute = Int32(bitPattern: minute)
        } else if reader.remaining > 0, payload[reader.offset] == acceptedMarker {
            reader.offset += 1
            guard let minute = reader.u32() else { return nil }
            batch.acceptedMinute = Int32(bitPattern: minute)
        }
        let sourced = reader.remaining > 0 && payload[reader.offset] == sourcedShapesMarker
        let hasShapes = sourced || (reader.remaining > 0 && payload[reader.offset] == shapesMarker)
        if hasShapes { reader.offset += 1 }
        guard let platform = reader.u8().flatMap(Platform.init(rawValue:)),
              let revision = reader.u32(), let hasVersion = reader.u8(), let version = reader.name(),
              let routeCount = reader.u16() else { return nil }
        batch.platform = platform
        batch.revision = revision
        batch.appVersion = hasVersion == 1 ? version : nil
        for _ in 0..<routeCount {
            guard let name = reader.name() else { return nil }
            batch.routes.append(name)
        }
        guard let preconditionCount = reader.u16() else { return nil }
        for _ in 0..<preconditionCount {
            guard let name = reader.name() else { return nil }
            batch.preconditions.append(name)
        }
        guard let tallyCount = reader.u32(), hasShapes ? reader.remaining >= Int(tallyCount) * 15 : reader.remaining == Int(tallyCount) * 15 else { return nil }
        batch.tallies.reserveCapacity(Int(tallyCount))
        for _ in 0..<tallyCount {
            guard let minute = reader.u32(), let entry = reader.u8(), let outcome = reader.u8(), let reason = reader.u8(),
                  let route = reader.u16(), let precondition = reader.u16(), let count = reader.u32(),
                  EntryPoint(rawValue: entry) != nil, Outcome(rawValue: outcome) != nil, FailureReason(rawValue: reason) != nil,
                  Int(route) < batch.routes.count + 2, Int(precondition) < batch.preconditions.count + 2 else { return nil }
            batch.tallies.append(Tally(minute: Int32(bitPattern: minute), entry: entry, outcome: outcome, reason: reason,
                                       route: route, precondition: precondition, count: count))
        }
        if hasShapes {
            guard let shapeCount = reader.u32(), shapeCount > 0 else { return nil }
            for _ in 0..<shapeCount {
                guard let minute = reader.u32(), let entry = reader.u8(), let count = reader.u32(), let shape = reader.name(),
                      EntryPoint(rawValue: entry) != nil else { return nil }
                var source: UInt32 = 0
                if sourced { guard let value = reader.u32() else { return nil }; source = value }
                batch.shapes.append(ShapeTally(minute: Int32(bitPattern: minute), entry: entry, shape: shape, count: count, source: source))
            }
            guard reader.remaining == 0 else { return nil }
        }
        return (sequence, .batch(batch))
    }

    /// Where a scan of the log stopped.
    enum End: Equatable {
        /// Zeros: the part of the file allocated ahead and not yet written.
        case zeros
        /// A whole frame with a lower sequence number: written before the last compaction
        /// emptied the log, and counted in the snapshot.
        case olderFrame
        /// Anything else: a write torn by a crash (never acknowledged) or damage.
        case damaged
    }

    /// Every whole, checked frame from the start of a log whose sequence numbers rise, the
    /// length they span, and what follows them.
    static func scan(_ log: UnsafeRawBufferPointer) -> (frames: [(sequence: UInt64, entry: LogEntry)], validLength: Int, end: End) {
        var frames: [(UInt64, LogEntry)] = []
        var reader = ByteReader(log)
        while true {
            let start = reader.offset
            guard let length = reader.u32().map(Int.init), let crc = reader.u32() else {
                return (frames, start, log[start...].allSatisfy { $0 == 0 } ? .zeros : .damaged)
            }
            if length == 0, crc == 0 { return (frames, start, .zeros) }
            guard length <= maximumPayload, reader.remaining >= length else { return (frames, start, .damaged) }
            let payload = UnsafeRawBufferPointer(rebasing: log[reader.offset..<reader.offset + length])
            guard CRC32C.checksum(payload) == crc, let frame = Frame.decode(payload) else { return (frames, start, .damaged) }
            if let previous = frames.last, frame.sequence <= previous.0 { return (frames, start, .olderFrame) }
            frames.append(frame)
            reader.offset += length
        }
    }
}

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
