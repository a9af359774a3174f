/// Writes responses as HTTP/1.1 bytes (RFC 9112 §4, §6): status line, the handler's
/// fields, then `Content-Length` on every response that may have one, `Date`, and
/// `Connection: close` when the connection will close. `HEAD` gets the fields of the
/// `GET` response without its content (RFC 9110 §9.3.2).
public enum HTTPResponseSerializer {
    /// - Parameters:
    ///   - date: the IMF-fixdate for the `Date` field (see `HTTPDate`).
    ///   - isHead: whether the request was HEAD.
    ///   - keepAlive: whether the connection stays open after this response.
    /// - Complexity: O(size of the response).
    public static func serialize(
        _ response: HTTPResponse, date: String, isHead: Bool, keepAlive: Bool, into out: inout [UInt8]
    ) {
        out.reserveCapacity(out.count + 160 + response.body.count)
        serializeHead(response, date: date, keepAlive: keepAlive, into: &out)
        if sendsContent(response, isHead: isHead) { out.append(contentsOf: response.body) }
    }

    /// Whether the response's content goes on the wire after its head.
    public static func sendsContent(_ response: HTTPResponse, isHead: Bool) -> Bool {
        !isHead && response.status.allowsContent && !response.body.isEmpty
    }

    /// The status line and fields only, so a server can send the content from where it
    /// already is (a gather write) instead of copying it behind the head.
    /// - Parameter field: one more field the server adds (a request id), replacing any the
    ///   handler set under that name; passed here so a handler's shared, precomputed
    ///   response is never copied to add it.
    public static func serializeHead(_ response: HTTPResponse, date: String, keepAlive: Bool,
                                     field: (name: String, value: String)? = nil, into out: inout [UInt8]) {
        // The server's own Date: known to hold no CR or LF.
        serializeHead(response, dateLine: Array("Date: \(date)\r\n".utf8), keepAlive: keepAlive, fieldName: field?.name,
                      fieldLine: field.map { fieldLine($0.name, $0.value) } ?? [], into: &out)
    }

    /// The same, with the server's lines ready-made: `dateLine` is `Date: …` with its
    /// CRLF, `fieldLine` the one more field (named `fieldName`, which it replaces) with its
    /// CRLF. A loop keeps both from one request to the next, so no string is made per request.
    public static func serializeHead(_ response: HTTPResponse, dateLine: [UInt8], keepAlive: Bool,
                                     fieldName: String?, fieldLine: [UInt8], into out: inout [UInt8]) {
        if let prepared = response.preparedHead {
            out.append(contentsOf: prepared)
            out.append(contentsOf: fieldLine)
        } else {
            serializeStatusLine(response, into: &out)
            serializeFields(response, skipping: fieldName, into: &out)
            out.append(contentsOf: fieldLine)
            serializeContentLength(response, into: &out)
        }
        out.append(contentsOf: dateLine)
        if !keepAlive { out.append(contentsOf: connectionClose) }
        out.append(0x0D)
        out.append(0x0A)
    }

    /// A field's whole line, `name: value` and CRLF, as `serializeHead` writes it (CR and
    /// LF in the value become spaces).
    public static func fieldLine(_ name: String, _ value: String) -> [UInt8] {
        var line: [UInt8] = []
        appendField(name, value, to: &line)
        return line
    }

    private static let connectionClose: [UInt8] = Array("Connection: close\r\n".utf8)

    /// The status line, the handler's fields and Content-Length: everything of the head
    /// that does not change from one sending to the next.
    static func serializeStatusAndFields(_ response: HTTPResponse, into out: inout [UInt8]) {
        serializeStatusLine(response, into: &out)
        serializeFields(response, skipping: nil, into: &out)
        serializeContentLength(response, into: &out)
    }

    private static func serializeStatusLine(_ response: HTTPResponse, into out: inout [UInt8]) {
        out.append(contentsOf: "HTTP/1.1 ".utf8)
        out.append(contentsOf: String(response.status.code).utf8)
        out.append(0x20)
        out.append(contentsOf: response.status.reason.utf8)
        out.append(0x0D)
        out.append(0x0A)
    }

    /// The handler's fields, but the framing ones the serializer writes and `skipping`.
    private static func serializeFields(_ response: HTTPResponse, skipping: String?, into out: inout [UInt8]) {
        for handlerField in response.headers where !isFramingField(handlerField.name) {
            if let skipping, handlerField.name.equalsIgnoringASCIICase(skipping) { continue }
            appendField(handlerField.name, handlerField.value, to: &out)
        }
    }

    /// RFC 9110 §8.6: Content-Length on every response that can carry content; a HEAD
    /// response gives the length the GET would have had.
    private static func serializeContentLength(_ response: HTTPResponse, into out: inout [UInt8]) {
        if response.status.allowsContent {
            appendField("Content-Length", String(response.body.count), to: &out)
        }
    }

    /// `HTTP/1.1 100 Continue` (RFC 9110 §15.2.1).
    public static let continueResponse: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    private static func isFramingField(_ name: String) -> Bool {
        name.equalsIgnoringASCIICase("Content-Length") || name.equalsIgnoringASCIICase("Transfer-Encoding")
            || name.equalsIgnoringASCIICase("Connection") || name.equalsIgnoringASCIICase("Date")
    }

    private static func appendField(_ name: String, _ value: String, to out: inout [UInt8]) {
        out.append(contentsOf: name.utf8)
        out.append(0x3A)
        out.append(0x20)
        // A handler's value never splits the response: CR and LF become spaces.
        let breaks = value.utf8.withContiguousStorageIfAvailable { $0.contains { $0 == 0x0D || $0 == 0x0A } }
            ?? value.utf8.contains { $0 == 0x0D || $0 == 0x0A }
        if breaks {
            for byte in value.utf8 { out.append(byte == 0x0D || byte == 0x0A ? 0x20 : byte) }
        } else {
            out.append(contentsOf: value.utf8)
        }
        out.append(0x0D)
        out.append(0x0A)
    }
}
