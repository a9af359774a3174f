/// Incremental decoder of a chunked body (RFC 9112 §7.1): sizes in hex (overflow-safe),
/// extensions checked and ignored, data CRLF-terminated, trailer fields checked and
/// discarded. Bytes in, body bytes appended, never more than `maximumBody`.
public struct ChunkedDecoder: Sendable {
    private enum State: Sendable {
        case size(value: Int, digits: Int, lineBytes: Int, inExtension: Bool)
        case sizeLF(value: Int)
        case data(remaining: Int)
        case dataCR
        case dataLF
        case trailerLine(bytes: Int, lineStart: Bool)
        case trailerLF(emptyLine: Bool)
        case done
    }

    private var state = State.size(value: 0, digits: 0, lineBytes: 0, inExtension: false)
    private var trailerBytes = 0
    public let limits: HTTPLimits
    public var maximumBody: Int

    public init(limits: HTTPLimits = HTTPLimits(), maximumBody: Int? = nil) {
        self.limits = limits
        self.maximumBody = maximumBody ?? limits.maximumBody
    }

    public var isComplete: Bool {
        if case .done = state { return true }
        return false
    }

    /// Decodes from `bytes`, appending data to `body`; returns the bytes consumed. Stops
    /// after the final CRLF, leaving any following bytes (the next request) unconsumed.
    /// - Complexity: O(consumed).
    public mutating func decode(_ bytes: UnsafeBufferPointer<UInt8>, into body: inout [UInt8]) throws(HTTPParserError) -> Int {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch state {
            case .size(let value, let digits, let lineBytes, let inExtension):
                guard lineBytes < limits.maximumChunkLine else { throw .chunkLineTooLong }
                if byte == 0x0D {
                    guard digits > 0 else { throw .invalidChunkSize }
                    state = .sizeLF(value: value)
                } else if byte == 0x0A {
                    throw .bareLF
                } else if inExtension {
                    // chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] ); no controls.
                    guard byte >= 0x20 || byte == 0x09, byte != 0x7F else { throw .invalidChunkExtension }
                    state = .size(value: value, digits: digits, lineBytes: lineBytes + 1, inExtension: true)
                } else if isHexDigit(byte) {
                    // RFC 9112 §7.1: anticipate large numerals and prevent overflow.
                    guard value <= (Int.max - 15) / 16 else { throw .chunkSizeOverflow }
                    state = .size(value: value * 16 + hexDigitValue(byte), digits: digits + 1, lineBytes: lineBytes + 1, inExtension: false)
                } else if byte == 0x3B || byte == 0x20 || byte == 0x09 {
                    guard digits > 0 else { throw .invalidChunkSize }
                    if byte == 0x3B {
                        state = .size(value: value, digits: digits, lineBytes: lineBytes + 1, inExtension: true)
                    } else {
                        // BWS before ";" only.
                        guard index + 1 < bytes.count else { return index }
                        let next = bytes[index + 1]
                        guard next == 0x3B || next == 0x20 || next == 0x09 else { throw .invalidChunkExtension }
                        state = .size(value: value, digits: digits, lineBytes: lineBytes + 1, inExtension: false)
                    }
                } else {
                    throw .invalidChunkSize
                }
                index += 1
            case .sizeLF(let value):
                guard byte == 0x0A else { throw .bareCR }
                index += 1
                if value == 0 {
                    state = .trailerLine(bytes: 0, lineStart: true)
                } else {
                    guard value <= maximumBody - body.count else { throw .bodyTooLarge }
                    state = .data(remaining: value)
                }
            case .data(let remaining):
                let take = min(remaining, bytes.count - index)
                body.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<(index + take)]))
                index += take
                state = remaining == take ? .dataCR : .data(remaining: remaining - take)
            case .dataCR:
                guard byte == 0x0D else { throw .invalidChunkTerminator }
                index += 1
                state = .dataLF
            case .dataLF:
                guard byte == 0x0A else { throw .invalidChunkTerminator }
                index += 1
                state = .size(value: 0, digits: 0, lineBytes: 0, inExtension: false)
            case .trailerLine(let lineBytes, let lineStart):
                trailerBytes += 1
                guard trailerBytes <= limits.maximumTrailerBytes else { throw .trailerTooLarge }
                if byte == 0x0D {
                    state = .trailerLF(emptyLine: lineStart)
                } else if byte == 0x0A {
                    throw .bareLF
                } else {
                    // A trailer field line: no obs-fold, no controls.
                    if lineStart, byte == 0x20 || byte == 0x09 { throw .obsoleteLineFolding }
                    guard byte >= 0x20 || byte == 0x09, byte != 0x7F else { throw .invalidTrailer }
                    state = .trailerLine(bytes: lineBytes + 1, lineStart: false)
                }
                index += 1
            case .trailerLF(let emptyLine):
                guard byte == 0x0A else { throw .bareCR }
                index += 1
                if emptyLine {
                    state = .done
                    return index
                }
                state = .trailerLine(bytes: 0, lineStart: true)
            case .done:
                return index
            }
        }
        return index
    }
}
