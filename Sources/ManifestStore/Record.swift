import RouteEngine

/// One stored file: a JSON header line, then the body bytes exactly as received.
///
///     {"format":"waymark.record/1","bytes":1234,"sha256":"…",…metadata}\n<body>
///
/// The header carries the body's length and SHA-256, so a torn or altered file is caught:
/// on start by its length (and, for the revisions served and the schemas, its hash), and
/// whenever a body is read by its hash — the store refuses to serve part of a file.
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
    /// - Complexity: O(size): the body is hashed.
    static func decode(_ bytes: [UInt8]) -> Result<Record, RecordError> {
        let header: Header
        switch Header.decode(bytes, fileSize: bytes.count) {
        case .success(let value): header = value
        case .failure(let problem): return .failure(problem)
        }
        let body = Array(bytes[header.bodyOffset...])
        let actual = SHA256.hex(body)
        guard actual == header.sha256 else {
            return .failure(.digestMismatch(actual: actual, header: header.sha256))
        }
        return .success(Record(metadata: header.metadata, body: body))
    }

    /// A stored file's header line, read without its body: what opening a store reads of
    /// history. The body's length is checked against the file's size; its SHA-256 only
    /// when the body is read (`decode`).
    struct Header: Sendable {
        var metadata: [String: JSONValue]
        /// The body's SHA-256 as the header states it, hex.
        var sha256: String
        var bodyLength: Int
        /// Where the body starts in the file: just past the header's newline.
        var bodyOffset: Int

        /// The longest header line read: a header is a few fields and a message of a few KB.
        static let maximumBytes = 1 << 20

        /// - Parameter head: the file's first bytes, through the header's newline at least.
        /// - Complexity: O(header), whatever the body's size.
        static func decode(_ head: [UInt8], fileSize: Int) -> Result<Header, RecordError> {
            guard let newline = head.firstIndex(of: UInt8(ascii: "\n")) else {
                return .failure(.noHeader)
            }
            guard case .object(var header)? = try? JSONParser().parse(head[..<newline]) else {
                return .failure(.headerNotAnObject)
            }
            guard header["format"]?.stringValue == Record.format else {
                return .failure(.wrongFormat)
            }
            guard let length = header["bytes"]?.intValue, let expected = header["sha256"]?.stringValue else {
                return .failure(.noLengthOrDigest)
            }
            let actual = fileSize - (newline + 1)
            guard actual == length else {
                return .failure(.lengthMismatch(actual: actual, header: length))
            }
            header["format"] = nil
            header["bytes"] = nil
            header["sha256"] = nil
            return .success(Header(metadata: header, sha256: expected, bodyLength: length, bodyOffset: newline + 1))
        }
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
