/// Incremental decoder of a chunked body (RFC 9112 §7.1): sizes in hex (overflow-safe),
/// extensions checked to the grammar of §7.1.1 and ignored, data CRLF-terminated, trailer
/// fields checked and discarded. Bytes in, body bytes appended, never more than `maximumBody`.
public struct ChunkedDecoder: Sendable {
    /// Where a chunk-size line is in RFC 9112 §7.1.1's grammar:
    ///
    ///     chunk-ext      = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
    ///     chunk-ext-name = token
    ///     chunk-ext-val  = token / quoted-string
    ///
    /// The line may end (CR) only where the grammar can: after the size's digits, a name, a
    /// token value or a closing quote — not after a bare `;` or `=`, nor inside quotes.
    enum Extension: Sendable {
        /// In the size's digits.
        case digits
        /// BWS after the size: only more of it or `;`.
        case afterSize
        /// After `;`: BWS, then a name.
        case beforeName
        case name
        /// BWS after a name: `=`, `;` or the end.
        case afterName
        /// After `=`: BWS, then a token or a quoted string.
        case beforeValue
        case token
        case quoted
        /// After a backslash in a quoted string.
        case quotedPair
        /// BWS after a value: `;` or the end.
        case afterValue

        var mayEndLine: Bool {
            switch self {
            case .digits, .name, .afterName, .token, .afterValue: true
            case .afterSize, .beforeName, .beforeValue, .quoted, .quotedPair: false
            }
        }

        /// The state after `byte`, nil when the grammar has no place for it.
        func next(_ byte: UInt8) -> Extension? {
            let whitespace = byte == 0x20 || byte == 0x09
            switch self {
            case .digits, .afterSize: return byte == 0x3B ? .beforeName : whitespace ? .afterSize : nil
            case .beforeName: return whitespace ? .beforeName : isTokenByte(byte) ? .name : nil
            case .name, .afterName:
                if byte == 0x3B { return .beforeName }
                if byte == 0x3D { return .beforeValue }
                if whitespace { return .afterName }
                return self == .name && isTokenByte(byte) ? .name : nil
            case .beforeValue: return whitespace ? .beforeValue : byte == 0x22 ? .quoted : isTokenByte(byte) ? .token : nil
            case .token, .afterValue:
                if byte == 0x3B { return .beforeName }
                if whitespace { return .afterValue }
                return self == .token && isTokenByte(byte) ? .token : nil
            // qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text
            case .quoted:
                if byte == 0x22 { return .afterValue }
                if byte == 0x5C { return .quotedPair }
                return whitespace || (byte >= 0x21 && byte != 0x7F) ? .quoted : nil
            // quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
            case .quotedPair: return whitespace || (byte >= 0x21 && byte != 0x7F) ? .quoted : nil
            }
        }
    }

    private enum State: Sendable {
        case size(value: Int, digits: Int, lineBytes: Int, ext: Extension)
        case sizeLF(value: Int)
        case data(remaining: Int)
        case dataCR
        case dataLF
        case trailerLine(bytes: Int, lineStart: Bool)
        case trailerLF(emptyLine: Bool)
        case done
    }

    private var state = State.size(value: 0, digits: 0, lineBytes: 0, ext: .digits)
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
            case .size(let value, let digits, let lineBytes, let ext):
                guard lineBytes < limits.maximumChunkLine else { throw .chunkLineTooLong }
                if byte == 0x0D {
                    guard digits > 0 else { throw .invalidChunkSize }
                    guard ext.mayEndLine else { throw .invalidChunkExtension }
                    state = .sizeLF(value: value)
                } else if byte == 0x0A {
                    throw .bareLF
                } else if case .digits = ext, isHexDigit(byte) {
                    // RFC 9112 §7.1: anticipate large numerals and prevent overflow.
                    guard value <= (Int.max - 15) / 16 else { throw .chunkSizeOverflow }
                    state = .size(value: value * 16 + hexDigitValue(byte), digits: digits + 1, lineBytes: lineBytes + 1, ext: .digits)
                } else if case .digits = ext, digits == 0 || !(byte == 0x3B || byte == 0x20 || byte == 0x09) {
                    throw .invalidChunkSize
                } else {
                    guard let next = ext.next(byte) else { throw .invalidChunkExtension }
                    state = .size(value: value, digits: digits, lineBytes: lineBytes + 1, ext: next)
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
                state = .size(value: 0, digits: 0, lineBytes: 0, ext: .digits)
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
