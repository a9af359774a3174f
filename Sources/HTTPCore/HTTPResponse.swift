/// A response as handlers build it. The serializer adds `Content-Length`, `Date` and
/// `Connection`; handlers set the rest.
public struct HTTPResponse: Hashable, Sendable {
    public var status: HTTPStatus { didSet { preparedHead = nil } }
    public var headers: HTTPHeaders { didSet { preparedHead = nil } }
    public var body: [UInt8] { didSet { preparedHead = nil } }
    /// The status line, the handler's fields and Content-Length, serialized once by
    /// `prepared()` for a response served many times; any change drops it.
    public private(set) var preparedHead: [UInt8]?

    public static func == (a: HTTPResponse, b: HTTPResponse) -> Bool {
        a.status == b.status && a.headers == b.headers && a.body == b.body
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(headers)
        hasher.combine(body)
    }

    /// This response with its head serialized ahead of time, for a handler that answers
    /// with the same response again and again (a cached manifest and its 304). It must not
    /// carry the field the server adds itself (the request id).
    public func prepared() -> HTTPResponse {
        var copy = self
        var head: [UInt8] = []
        HTTPResponseSerializer.serializeStatusAndFields(self, field: nil, into: &head)
        copy.preparedHead = head
        return copy
    }

    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
        preparedHead = nil
    }

    public init(status: HTTPStatus = .ok, contentType: String, body: [UInt8]) {
        self.init(status: status, headers: HTTPHeaders([("Content-Type", contentType)]), body: body)
    }

    /// A JSON error body `{"error": {"code", "message"}}` for a status; the code defaults
    /// to the status's name (`contentTooLarge`).
    public static func error(_ status: HTTPStatus, code: String? = nil, message: String) -> HTTPResponse {
        let code = code ?? status.name
        let body = "{\"error\":{\"code\":\"\(jsonEscaped(code))\",\"message\":\"\(jsonEscaped(message))\"}}"
        return HTTPResponse(status: status, contentType: "application/json", body: Array(body.utf8))
    }
}

func jsonEscaped(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case _ where scalar.value < 0x20: out += "\\u00" + String(scalar.value, radix: 16).leftPadded(to: 2)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}

extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
