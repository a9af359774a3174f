import RouteEngine

/// One stored file: a JSON header line, then the body bytes exactly as received.
///
///     {"format":"waymark.record/1","bytes":1234,"sha256":"…",…metadata}\n<body>
///
/// The header carries the body's length and SHA-256, so a torn or altered file is caught
/// on start: the store refuses to serve rather than serve part of it.
struct Record: Sendable {
    static let format = "waymark.record/1"
    var metadata: [String: JSONValue]
    var body: [UInt8]
    var sha256: String

    init(metadata: [String: JSONValue], body: [UInt8]) {
        self.metadata = metadata
        self.body = body
        self.sha256 = SHA256.hex(body)
    }

    var encoded: [UInt8] {
        var header = metadata
        header["format"] = .string(Self.format)
        header["bytes"] = .int(body.count)
        header["sha256"] = .string(sha256)
        return JSONValue.object(header).serializedBytes() + [UInt8(ascii: "\n")] + body
    }

    /// Parses and verifies a stored file; the error says what is wrong with it.
    static func decode(_ bytes: [UInt8]) -> Result<Record, RecordError> {
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else {
            return .failure(.noHeader)
        }
        guard case .object(var header)? = try? JSONParser().parse(bytes[..<newline]) else {
            return .failure(.headerNotAnObject)
        }
        guard header["format"]?.stringValue == format else {
            return .failure(.wrongFormat)
        }
        guard let length = header["bytes"]?.intValue, let expected = header["sha256"]?.stringValue else {
            return .failure(.noLengthOrDigest)
        }
        let body = Array(bytes[(newline + 1)...])
        guard body.count == length else {
            return .failure(.lengthMismatch(actual: body.count, header: length))
        }
        let actual = SHA256.hex(body)
        guard actual == expected else {
            return .failure(.digestMismatch(actual: actual, header: expected))
        }
        header["format"] = nil
        header["bytes"] = nil
        header["sha256"] = nil
        return .success(Record(metadata: header, body: body))
    }
}

/// Why a stored file is not a sound record; `message` says it after the file's name.
enum RecordError: Error, Hashable, Sendable {
    case noHeader
    case headerNotAnObject
    case wrongFormat
    case noLengthOrDigest
    case lengthMismatch(actual: Int, header: Int)
    case digestMismatch(actual: String, header: String)
    /// The record is sound but what it holds is not (a schema that no longer decodes, a
    /// revision header that does not fit its place).
    case content(String)

    var message: String {
        switch self {
        case .noHeader: "no header line (the file is truncated or not a Waymark record)"
        case .headerNotAnObject: "the header line is not a JSON object"
        case .wrongFormat: "the header's format is not \(Record.format)"
        case .noLengthOrDigest: "the header lacks bytes or sha256"
        case .lengthMismatch(let actual, let header): "the body has \(actual) bytes, the header says \(header)"
        case .digestMismatch(let actual, let header): "the body's SHA-256 is \(actual), the header says \(header)"
        case .content(let reason): reason
        }
    }
}
