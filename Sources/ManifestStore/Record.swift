import Hashing
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
    static func decode(_ bytes: [UInt8]) -> Result<Record, StoreError> {
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else {
            return .failure(StoreError("no header line (the file is truncated or not a Waymark record)"))
        }
        guard case .object(var header)? = try? JSONParser().parse(bytes[..<newline]) else {
            return .failure(StoreError("the header line is not a JSON object"))
        }
        guard header["format"]?.stringValue == format else {
            return .failure(StoreError("the header's format is not \(format)"))
        }
        guard let length = header["bytes"]?.intValue, let expected = header["sha256"]?.stringValue else {
            return .failure(StoreError("the header lacks bytes or sha256"))
        }
        let body = Array(bytes[(newline + 1)...])
        guard body.count == length else {
            return .failure(StoreError("the body has \(body.count) bytes, the header says \(length)"))
        }
        let actual = SHA256.hex(body)
        guard actual == expected else {
            return .failure(StoreError("the body's SHA-256 is \(actual), the header says \(expected)"))
        }
        header["format"] = nil
        header["bytes"] = nil
        header["sha256"] = nil
        return .success(Record(metadata: header, body: body))
    }
}
