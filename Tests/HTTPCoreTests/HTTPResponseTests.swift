import HTTPCore
import Testing

@Suite("HTTP responses")
struct HTTPResponseTests {
    func serialized(_ response: HTTPResponse, isHead: Bool = false, keepAlive: Bool = true) -> String {
        var out: [UInt8] = []
        HTTPResponseSerializer.serialize(response, date: "Sat, 21 Nov 2026 10:00:00 GMT", isHead: isHead, keepAlive: keepAlive, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func okWithBody() {
        let response = HTTPResponse(status: .ok, contentType: "application/json", body: Array("{}".utf8))
        #expect(serialized(response) == "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nDate: Sat, 21 Nov 2026 10:00:00 GMT\r\n\r\n{}")
    }

    @Test func headKeepsLengthWithoutContent() {
        let response = HTTPResponse(status: .ok, contentType: "text/plain", body: Array("hello".utf8))
        #expect(serialized(response, isHead: true).hasSuffix("Content-Length: 5\r\nDate: Sat, 21 Nov 2026 10:00:00 GMT\r\n\r\n"))
    }

    @Test func notModifiedAndNoContentCarryNoLengthOrBody() {
        for status in [HTTPStatus.notModified, .noContent] {
            let text = serialized(HTTPResponse(status: status, body: Array("x".utf8)))
            #expect(!text.contains("Content-Length"))
            #expect(text.hasSuffix("\r\n\r\n"))
        }
    }

    @Test func closeAndFramingFieldsAreTheSerializers() {
        var response = HTTPResponse(status: .ok, body: Array("ab".utf8))
        response.headers.add("Content-Length", "999")
        response.headers.add("Transfer-Encoding", "chunked")
        response.headers.add("X-Split", "a\r\nInjected: yes")
        let text = serialized(response, keepAlive: false)
        #expect(text.contains("Content-Length: 2\r\n"))
        #expect(!text.contains("999") && !text.contains("chunked"))
        #expect(text.contains("X-Split: a  Injected: yes\r\n"))
        #expect(text.contains("Connection: close\r\n"))
    }

    func head(_ response: HTTPResponse, field: (String, String)? = nil, keepAlive: Bool = true) -> String {
        var out: [UInt8] = []
        HTTPResponseSerializer.serializeHead(response, date: "Sat, 21 Nov 2026 10:00:00 GMT", keepAlive: keepAlive,
                                             field: field.map { (name: $0.0, value: $0.1) }, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func thePrivilegedFieldReplacesTheHandlersAndAPreparedHeadMatches() {
        var response = HTTPResponse(status: .ok, headers: HTTPHeaders([("ETag", "\"a\""), ("x-request-id", "forged")]), body: Array("{}".utf8))
        let text = head(response, field: ("X-Request-Id", "r-1"))
        #expect(text.contains("X-Request-Id: r-1\r\n") && !text.contains("forged"), "the server's request id wins")
        response.headers.remove("x-request-id")
        let prepared = response.prepared()
        #expect(prepared.preparedHead != nil && prepared == response)
        for keepAlive in [true, false] {
            #expect(head(prepared, keepAlive: keepAlive) == head(response, keepAlive: keepAlive), "same bytes, prepared or not")
        }
        #expect(head(prepared, field: ("X-Request-Id", "r-2")).contains("X-Request-Id: r-2\r\n"))
        var changed = prepared
        changed.body = Array("{\"a\":1}".utf8)
        #expect(changed.preparedHead == nil && head(changed).contains("Content-Length: 7\r\n"), "a change drops the prepared head")
    }

    @Test(arguments: [(HTTPStatus.badRequest, "badRequest"), (.contentTooLarge, "contentTooLarge"), (.uriTooLong, "uriTooLong"),
                      (.requestHeaderFieldsTooLarge, "requestHeaderFieldsTooLarge"), (.httpVersionNotSupported, "httpVersionNotSupported"),
                      (.methodNotAllowed, "methodNotAllowed")])
    func errorCodesAreTheStatusNames(_ status: HTTPStatus, _ name: String) {
        #expect(status.name == name)
        let body = String(decoding: HTTPResponse.error(status, message: "m").body, as: UTF8.self)
        #expect(body == "{\"error\":{\"code\":\"\(name)\",\"message\":\"m\"}}")
    }

    @Test(arguments: [(0, "Thu, 01 Jan 1970 00:00:00 GMT"), (784111777, "Sun, 06 Nov 1994 08:49:37 GMT"),
                      (1_795_255_200, "Sat, 21 Nov 2026 10:00:00 GMT"), (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT")])
    func imfFixdate(_ seconds: Int, _ expected: String) {
        #expect(HTTPDate.format(secondsSince1970: seconds) == expected)
    }
}
