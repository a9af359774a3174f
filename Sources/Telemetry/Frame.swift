import LinkShapes

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

    /// The bytes `encode` writes for `batch` after the frame's header.
    static func payloadSize(_ batch: Batch) -> Int {
        let names = batch.routes.reduce(0) { $0 + 2 + $1.count } + batch.preconditions.reduce(0) { $0 + 2 + $1.count }
        let shapes = batch.shapes.isEmpty ? 0 : 1 + 4 + batch.shapes.reduce(0) { $0 + 4 + 1 + 4 + 2 + $1.shape.count + 4 }
        let id = batch.id != nil ? 1 + 16 + 4 : batch.acceptedMinute != 0 ? 1 + 4 : 0
        return 8 + id + 1 + 4 + 1 + 2 + (batch.appVersion?.count ?? 0) + 2 + 2 + names + 4 + batch.tallies.count * 15 + shapes
    }

    /// The bytes `encode` writes for `forward` after the frame's header.
    static func payloadSize(_ forward: Forward) -> Int {
        8 + 1 + Forward.magic.count + 2 + forward.node.count + 8 + 4 + forward.batches.reduce(0) { $0 + headerSize + payloadSize($1) } + 4
    }

    static func encode(_ batch: Batch, sequence: UInt64, into out: inout [UInt8]) {
        let payload = payloadSize(batch)
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
        if payload.count > 8, payload[8] == forwardMarker {
            var reader = ByteReader(payload)
            guard let sequence = reader.u64(), case .success(let forward) = Forward.decode(UnsafeRawBufferPointer(rebasing: payload[9...])) else { return nil }
            return (sequence, .forward(forward))
        }
        return decodeBatch(payload).map { ($0.sequence, .batch($0.batch)) }
    }

    /// A checked payload back to its batch; nil if it is not a valid batch (a forward is
    /// not one: inside a forward, frames are batches only, never a forward again, so no
    /// sender chooses how deep a decode recurses).
    /// At most `maximumShapes` shapes (checked before any is read).
    static func decodeBatch(_ payload: UnsafeRawBufferPointer, maximumShapes: Int = .max) -> (sequence: UInt64, batch: Batch)? {
        var reader = ByteReader(payload)
        var batch = Batch()
        guard let sequence = reader.u64(), reader.remaining == 0 || payload[reader.offset] != forwardMarker else { return nil }
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
            guard let shapeCount = reader.u32(), shapeCount > 0, Int(shapeCount) <= maximumShapes else { return nil }
            for _ in 0..<shapeCount {
                guard let minute = reader.u32(), let entry = reader.u8(), let count = reader.u32(), let shape = reader.name(),
                      EntryPoint(rawValue: entry) != nil else { return nil }
                var source: UInt32 = 0
                if sourced { guard let value = reader.u32() else { return nil }; source = value }
                batch.shapes.append(ShapeTally(minute: Int32(bitPattern: minute), entry: entry, shape: shape, count: count, source: source))
            }
            guard reader.remaining == 0 else { return nil }
        }
        return (sequence, batch)
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
