/// Incremental parser of a request head. Bytes in; `needMoreData`, or a complete head with
/// the bytes it consumed, or a typed error. Each byte is scanned once however the input is
/// split, and every limit in `HTTPLimits` is enforced while scanning, so a client cannot
/// make it buffer more than `maximumHeadBytes`.
public struct HTTPHeadParser: Sendable {
    public enum Result: Hashable, Sendable {
        case needMoreData
        case complete(HTTPRequestHead, consumed: Int)
    }

    public let limits: HTTPLimits
    /// Offset of the next byte to scan.
    private var scanned = 0
    /// Start of the head proper (after ignored leading empty lines).
    private var headStart = 0
    private var lineStart = 0
    private var lines = 0

    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
    }

    /// Forgets a partial head; call after a complete one before parsing the next.
    public mutating func reset() {
        scanned = 0
        headStart = 0
        lineStart = 0
        lines = 0
    }

    /// Parses the head at the start of `bytes`; call again with the same bytes plus more.
    /// - Complexity: O(new bytes) per call; O(head) once complete.
    public mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTPParserError) -> Result {
        var index = scanned
        while index < bytes.count {
            // The bytes up to the next CR or LF are ordinary: each must be within the limits,
            // checked for the run's last byte, which is the first to break one if any does.
            let runEnd = Self.nextLineBreak(in: bytes, from: index)
            if runEnd > index {
                let last = runEnd - 1 - headStart
                if lines == 0, last >= min(limits.maximumRequestLine, limits.maximumHeadBytes) {
                    throw limits.maximumRequestLine <= limits.maximumHeadBytes ? .requestLineTooLong : .headTooLarge
                }
                if last >= limits.maximumHeadBytes { throw .headTooLarge }
                index = runEnd
                if index == bytes.count { break }
            }
            // RFC 9112 §2.2 lets a recipient accept a bare LF; strict servers do not.
            if bytes[index] == 0x0A { throw .bareLF }
            // A CR: RFC 9112 §2.2, a bare CR is invalid.
            guard index + 1 < bytes.count else { break }
            guard bytes[index + 1] == 0x0A else { throw .bareCR }
            let lineEnd = index
            index += 2
            if lineEnd == lineStart {
                if lines == 0 {
                    // RFC 9112 §2.2: ignore empty lines before the request line.
                    headStart = index
                    lineStart = index
                    guard headStart <= limits.maximumRequestLine else { throw .requestLineTooLong }
                    continue
                }
                // The head is every line before this empty one, without the last line's CRLF.
                let head = try Self.parseHead(UnsafeBufferPointer(rebasing: bytes[headStart..<(lineEnd - 2)]), limits: limits,
                                              fieldCount: lines - 1)
                reset()
                return .complete(head, consumed: index)
            }
            lines += 1
            if lines > limits.maximumHeaderCount + 1 { throw .tooManyHeaders }
            lineStart = index
        }
        scanned = index
        return .needMoreData
    }

    /// The index of the first CR or LF at or after `start`, or `bytes.count`: eight bytes at
    /// a time (the SWAR "has zero byte" test; its lowest flagged byte is always exact).
    @inline(__always)
    static func nextLineBreak(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        if let base = bytes.baseAddress {
            let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
            while index + 8 <= bytes.count {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
                let cr = word ^ (ones &* 0x0D), lf = word ^ (ones &* 0x0A)
                let found = (((cr &- ones) & ~cr) | ((lf &- ones) & ~lf)) & highs
                if found != 0 { return index + found.trailingZeroBitCount / 8 }
                index += 8
            }
        }
        while index < bytes.count, bytes[index] != 0x0D, bytes[index] != 0x0A { index += 1 }
        return index
    }

    /// Parses a complete head: CRLF-separated lines, without the terminating CRLF CRLF.
    /// - Parameter fieldCount: how many field lines the head has, when the caller counted
    ///   them (as `parse` does); 0 to count them here.
    static func parseHead(_ head: UnsafeBufferPointer<UInt8>, limits: HTTPLimits, fieldCount: Int = 0) throws(HTTPParserError) -> HTTPRequestHead {
        // Every CR here is followed by LF (the scan in `parse` checked).
        let end = nextLineBreak(in: head, from: 0)
        var request = try parseRequestLine(UnsafeBufferPointer(rebasing: head[0..<end]))
        if end + 2 <= head.count {
            let text = UnsafeBufferPointer(rebasing: head[(end + 2)...])
            let count = fieldCount > 0 ? fieldCount : lineCount(text)
            request.headers = try RawFieldsBuilder.build(text: text, count: count, parse: parseField)
        }
        try checkHost(request)
        return request
    }

    /// How many CRLF-separated lines `text` holds.
    static func lineCount(_ text: UnsafeBufferPointer<UInt8>) -> Int {
        var count = 0, start = 0
        while start <= text.count {
            count += 1
            start = nextLineBreak(in: text, from: start) + 2
        }
        return count
    }

    /// RFC 9112 §3: `method SP request-target SP HTTP-version`, single spaces.
    static func parseRequestLine(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPParserError) -> HTTPRequestHead {
        guard let firstSpace = line.firstIndex(of: 0x20) else { throw .invalidRequestLine }
        guard let secondSpace = line[(firstSpace + 1)...].firstIndex(of: 0x20),
              !line[(secondSpace + 1)...].contains(0x20)
        else { throw .invalidRequestLine }
        let method = UnsafeBufferPointer(rebasing: line[..<firstSpace])
        let target = UnsafeBufferPointer(rebasing: line[(firstSpace + 1)..<secondSpace])
        let version = UnsafeBufferPointer(rebasing: line[(secondSpace + 1)...])
        guard !method.isEmpty, method.allSatisfy(isTokenByte) else { throw .invalidMethod }
        let parsedVersion = try parseVersion(version)
        let methodString = String(decoding: method, as: UTF8.self)
        let targetString = try parseTarget(target, method: methodString)
        return HTTPRequestHead(method: methodString, target: targetString, version: parsedVersion)
    }

    /// RFC 9112 §2.3: `HTTP/` DIGIT `.` DIGIT, case-sensitive. A higher 1.x minor is
    /// treated as 1.1 (RFC 9110 §2.5); another major version is 505.
    static func parseVersion(_ version: UnsafeBufferPointer<UInt8>) throws(HTTPParserError) -> HTTPVersion {
        guard version.count == 8, version[0] == 0x48, version[1] == 0x54, version[2] == 0x54, version[3] == 0x50,
              version[4] == 0x2F, isDecimalDigit(version[5]), version[6] == 0x2E, isDecimalDigit(version[7])
        else { throw .invalidVersion }
        guard version[5] == 0x31 else { throw .unsupportedVersion }
        return version[7] == 0x30 ? .http1_0 : .http1_1
    }

    /// Origin-form (`/path?query`), asterisk-form for OPTIONS, or absolute-form (reduced to
    /// origin-form, RFC 9112 §3.2.2). Only RFC 3986 characters; every `%` followed by two hex digits.
    static func parseTarget(_ target: UnsafeBufferPointer<UInt8>, method: String) throws(HTTPParserError) -> String {
        guard !target.isEmpty, target.allSatisfy(isTargetByte) else { throw .invalidTarget }
        var index = 0
        while index < target.count {
            if target[index] == 0x25 {
                guard index + 2 < target.count, isHexDigit(target[index + 1]), isHexDigit(target[index + 2]) else {
                    throw .invalidTarget
                }
                index += 3
            } else {
                index += 1
            }
        }
        let text = String(decoding: target, as: UTF8.self)
        if target[0] == 0x2F { return text }
        if text == "*" {
            guard method == "OPTIONS" else { throw .invalidTarget }
            return text
        }
        // absolute-form: scheme "://" authority path-abempty [ "?" query ]
        let lowered = text.lowercased()
        for scheme in ["http://", "https://"] where lowered.hasPrefix(scheme) {
            let rest = text.dropFirst(scheme.count)
            guard let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
            guard authorityEnd != rest.startIndex else { throw .invalidTarget }
            let path = rest[authorityEnd...]
            return path.first == "?" ? "/" + path : String(path)
        }
        throw .invalidTarget
    }

    /// RFC 9112 §5: `field-name ":" OWS field-value OWS`. Where the name and the value
    /// lie in the line.
    static func parseField(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPParserError) -> (name: Range<Int>, value: Range<Int>) {
        // The name's bytes up to the colon, each a tchar; anything else is sorted out below.
        var colon = 0
        while colon < line.count, isTokenByte(line[colon]) { colon += 1 }
        if colon == 0 || colon == line.count || line[colon] != 0x3A { try refuseFieldName(line) }
        var valueStart = colon + 1
        var valueEnd = line.count
        while valueStart < valueEnd, line[valueStart] == 0x20 || line[valueStart] == 0x09 { valueStart += 1 }
        while valueEnd > valueStart, line[valueEnd - 1] == 0x20 || line[valueEnd - 1] == 0x09 { valueEnd -= 1 }
        // RFC 9110 §5.5: field-vchar, SP and HTAB (and obs-text); no other control bytes.
        guard isFieldValue(UnsafeBufferPointer(rebasing: line[valueStart..<valueEnd])) else { throw .invalidFieldValue }
        return (0..<colon, valueStart..<valueEnd)
    }

    /// Why a field line's name is wrong, once the fast scan found it is.
    static func refuseFieldName(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPParserError) {
        guard let first = line.first else { throw .invalidFieldName }
        // RFC 9112 §5.2: obs-fold is rejected with 400.
        if first == 0x20 || first == 0x09 { throw .obsoleteLineFolding }
        guard let colon = line.firstIndex(of: 0x3A) else { throw .invalidFieldName }
        let name = UnsafeBufferPointer(rebasing: line[..<colon])
        guard !name.isEmpty else { throw .invalidFieldName }
        // RFC 9112 §5.1: no whitespace between the field name and the colon.
        if name.last == 0x20 || name.last == 0x09 { throw .whitespaceBeforeColon }
        throw .invalidFieldName
    }

    /// RFC 9110 §7.2 / RFC 9112 §3.2: exactly one valid Host in HTTP/1.1, at most one in 1.0.
    static func checkHost(_ head: HTTPRequestHead) throws(HTTPParserError) {
        // One pass over the fields named Host, on the bytes where they lie.
        var count = 0, valid = true
        head.headers.forEachValue(named: "Host") { value in
            count += 1
            valid = valid && value.allSatisfy(isHostByte) && hasHostShape(value)
            return count < 2
        }
        guard count <= 1 else { throw .multipleHost }
        guard count == 1 else {
            if head.version == .http1_1 { throw .missingHost }
            return
        }
        guard valid else { throw .invalidHost }
    }
}

/// Whether `byte` is in the ASCII class given as two 64-bit masks (bytes 0–63, 64–127):
/// a shift and a test per byte, where a `switch` over the class compiled to a chain of
/// compares. Bytes of 0x80 and up are in no class.
@inline(__always) func inByteClass(_ byte: UInt8, low: UInt64, high: UInt64) -> Bool {
    byte < 64 ? (low >> UInt64(byte)) & 1 != 0 : byte < 128 ? (high >> UInt64(byte &- 64)) & 1 != 0 : false
}

/// RFC 9110 §5.6.2 tchar: digits, letters and ``!#$%&'*+-.^_`|~``.
@inline(__always) func isTokenByte(_ byte: UInt8) -> Bool {
    inByteClass(byte, low: 0x03FF_6CFA_0000_0000, high: 0x57FF_FFFF_C7FF_FFFE)
}

/// RFC 3986 characters allowed in a request-target: unreserved (`-._~`), sub-delims
/// (`!$&'()*+,;=`), and `:@/?%`.
@inline(__always) func isTargetByte(_ byte: UInt8) -> Bool {
    inByteClass(byte, low: 0xAFFF_FFF2_0000_0000, high: 0x47FF_FFFE_87FF_FFFF)
}

/// Host = uri-host [ ":" port ]: reg-name characters (unreserved, sub-delims, `%`), the
/// IP-literal brackets, and the colon.
@inline(__always) func isHostByte(_ byte: UInt8) -> Bool {
    inByteClass(byte, low: 0x2FFF_7FF2_0000_0000, high: 0x47FF_FFFE_AFFF_FFFE)
}

/// RFC 9110 §7.2 / RFC 3986 §3.2.2–3.2.3: `uri-host [ ":" port ]` with `port = *DIGIT`. An
/// IP literal is bracketed, and only a port may follow its `]`; any other host has no
/// brackets and at most one colon, after which only digits come (`storefront.example:evil`
/// is not a host a link was opened on). The bytes are already in `isHostByte`'s class.
func hasHostShape(_ value: UnsafeRawBufferPointer) -> Bool {
    var port = value[...]
    if value.first == UInt8(ascii: "[") {
        guard let close = value.firstIndex(of: UInt8(ascii: "]")) else { return false }
        guard !value[1..<close].contains(UInt8(ascii: "[")) else { return false }
        port = value[(close + 1)...]
        guard port.isEmpty || port.first == UInt8(ascii: ":") else { return false }
        port = port.dropFirst()
    } else {
        guard !value.contains(UInt8(ascii: "[")), !value.contains(UInt8(ascii: "]")) else { return false }
        guard let colon = value.firstIndex(of: UInt8(ascii: ":")) else { return true }
        port = value[(colon + 1)...]
    }
    return port.allSatisfy(isDecimalDigit)
}

@inline(__always) func isDecimalDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

@inline(__always) func isHexDigit(_ byte: UInt8) -> Bool {
    isDecimalDigit(byte) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66)
}

@inline(__always) func hexDigitValue(_ byte: UInt8) -> Int {
    isDecimalDigit(byte) ? Int(byte - 0x30) : Int((byte | 0x20) - 0x61 + 10)
}

/// Whether every byte is a field-vchar, SP, HTAB or obs-text (RFC 9110 §5.5): none below
/// 0x20 but HTAB, and no DEL. Eight bytes at a time: a word is clean when no byte is below
/// 0x20 and none is 0x7F, found with the zero-byte test; a word that is not (a tab, or a
/// bad byte) is read again byte by byte.
/// - Complexity: O(bytes).
@inline(__always) func isFieldValue(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
    let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
    var index = 0
    if let base = value.baseAddress {
        let raw = UnsafeRawPointer(base)
        while index + 8 <= value.count {
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            // A byte below 0x20 (with its high bit clear), or a byte equal to 0x7F. Bytes of
            // obs-text (0x80 and up) pass: their high bit is set.
            let below = (word &- ones &* 0x20) & ~word & highs
            let delete = word ^ (ones &* 0x7F)
            if below | ((delete &- ones) & ~delete & highs) != 0 {
                for offset in index..<(index + 8) where !isFieldValueByte(value[offset]) { return false }
            }
            index += 8
        }
    }
    while index < value.count {
        if !isFieldValueByte(value[index]) { return false }
        index += 1
    }
    return true
}

@inline(__always) func isFieldValueByte(_ byte: UInt8) -> Bool { (byte >= 0x20 || byte == 0x09) && byte != 0x7F }
