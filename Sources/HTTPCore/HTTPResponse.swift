import CivilDate
/// A response as handlers build it. The serializer adds `Content-Length`, `Date` and
/// `Connection`; handlers set the rest.
public struct HTTPResponse: Hashable, Sendable {
    public var status: HTTPStatus { didSet { preparedHead = nil } }
    public var headers: HTTPHeaders { didSet { preparedHead = nil } }
    public var body: [UInt8] { didSet { preparedHead = nil; bodyFile = nil } }
    /// The same bytes as `body` in a sealed memory file, for a large body served many times:
    /// the server sends it from there (sendfile(2)) rather than copying `body` into the
    /// socket. Set by whoever made the file from `body`; any change to `body` drops it.
    public var bodyFile: BodyFile?
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
        HTTPResponseSerializer.serializeStatusAndFields(self, into: &head)
        copy.preparedHead = head
        return copy
    }

    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
        preparedHead = nil
        bodyFile = nil
    }

    public init(status: HTTPStatus = .ok, contentType: String, body: [UInt8]) {
        self.init(status: status, headers: HTTPHeaders([("Content-Type", contentType)]), body: body)
    }

    /// A JSON error body `{"error": {"code", "message"}}` for a status; the code defaults
    /// to the status's name (`contentTooLarge`).
    public static func error(_ status: HTTPStatus, code: String? = nil, message: String) -> HTTPResponse {
        let code = code ?? status.name
        var body = Array("{\"error\":{\"code\":".utf8)
        JSONString.append(code, to: &body)
        body += Array(",\"message\":".utf8)
        JSONString.append(message, to: &body)
        body += Array("}}".utf8)
        return HTTPResponse(status: status, contentType: "application/json", body: body)
    }
}


/// A descriptor holding a response body's bytes, closed when the last response (or queued
/// output) holding it lets go. HTTPCore makes no system calls: whoever makes the file gives
/// the release.
public final class BodyFile: Sendable {
    public let descriptor: Int32
    /// Its size: the body's.
    public let count: Int
    private let release: @Sendable (Int32) -> Void

    public init(descriptor: Int32, count: Int, release: @escaping @Sendable (Int32) -> Void) {
        self.descriptor = descriptor
        self.count = count
        self.release = release
    }

    deinit { release(descriptor) }
}
