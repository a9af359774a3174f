import HTTPCore
import Testing

struct AcceptRow: Sendable, CustomTestStringConvertible {
    var raw: String
    var method: String
    var target: String
    var version: HTTPVersion
    var body: String
    var label: String
    var testDescription: String { label }

    init(_ raw: String, _ method: String, _ target: String, version: HTTPVersion = .http1_1, body: String = "", _ label: String) {
        self.raw = raw
        self.method = method
        self.target = target
        self.version = version
        self.body = body
        self.label = label
    }
}

struct RejectRow: Sendable, CustomTestStringConvertible {
    var raw: String
    var error: HTTPParserError
    var status: Int
    var label: String
    var testDescription: String { label }

    init(_ raw: String, _ error: HTTPParserError, _ status: Int, _ label: String) {
        self.raw = raw
        self.error = error
        self.status = status
        self.label = label
    }
}

let H = "Host: a\r\n"

let acceptRows: [AcceptRow] = [
    .init("GET / HTTP/1.1\r\n\(H)\r\n", "GET", "/", "minimal"),
    .init("GET /v1/manifest?platform=ios&version=5.3.0 HTTP/1.1\r\n\(H)\r\n", "GET", "/v1/manifest?platform=ios&version=5.3.0", "query"),
    .init("HEAD /x HTTP/1.1\r\n\(H)\r\n", "HEAD", "/x", "HEAD"),
    .init("GET / HTTP/1.0\r\n\r\n", "GET", "/", version: .http1_0, "HTTP/1.0 without Host"),
    .init("GET / HTTP/1.0\r\nHost: a\r\nConnection: keep-alive\r\n\r\n", "GET", "/", version: .http1_0, "HTTP/1.0 keep-alive"),
    .init("GET / HTTP/1.2\r\n\(H)\r\n", "GET", "/", "higher 1.x minor is 1.1"),
    .init("\r\n\r\nGET / HTTP/1.1\r\n\(H)\r\n", "GET", "/", "leading empty lines ignored"),
    .init("POST /p HTTP/1.1\r\n\(H)Content-Length: 5\r\n\r\nhello", "POST", "/p", body: "hello", "Content-Length body"),
    .init("POST /p HTTP/1.1\r\n\(H)Content-Length: 0\r\n\r\n", "POST", "/p", "zero Content-Length"),
    .init("POST /p HTTP/1.1\r\n\(H)Content-Length: 005\r\n\r\nhello", "POST", "/p", body: "hello", "leading zeros in length"),
    .init("POST /p HTTP/1.1\r\n\(H)Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc", "POST", "/p", body: "abc", "identical lengths twice"),
    .init("POST /p HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", "POST", "/p", body: "hello", "chunked"),
    .init("POST /p HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", "POST", "/p", body: "abcde", "two chunks"),
    .init("POST /p HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n", "POST", "/p", body: "0123456789", "uppercase hex size"),
    .init("POST /p HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n0003;name=value\r\nabc\r\n0\r\n\r\n", "POST", "/p", body: "abc", "chunk extension"),
    .init("POST /p HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3 ;x\r\nabc\r\n0\r\n\r\n", "POST", "/p", body: "abc", "whitespace before extension"),
    // RFC 9112 §7.1.1: chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] )
    .init("POST /p HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;a;b=c\r\nabc\r\n0;z\r\n\r\n", "POST", "/p", body: "abc", "extensions on every chunk, one without a value"),
    .init("POST /p HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3 ; a = \"b\\\"c;d\" ; e\t=\tf\r\nabc\r\n0\r\n\r\n", "POST", "/p", body: "abc", "BWS around ; and =, a quoted value with an escaped quote and a ;"),
    .init("POST /p HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;a=\"\"\r\nabc\r\n0\r\n\r\n", "POST", "/p", body: "abc", "an empty quoted value"),
    .init("POST /p HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;a=\"\u{E9}\\\u{E9}\"\r\nabc\r\n0\r\n\r\n", "POST", "/p", body: "abc", "obs-text in a quoted value and a quoted pair"),
    .init("POST /p HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;!#$%&'*+-.^_`|~09aZ=x\r\nabc\r\n0\r\n\r\n", "POST", "/p", body: "abc", "every tchar in a name"),
    .init("POST /p HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n", "POST", "/p", body: "abc", "trailer field"),
    .init("POST /p HTTP/1.1\r\n\(H)Transfer-Encoding: Chunked\r\n\r\n0\r\n\r\n", "POST", "/p", "coding name is case-insensitive"),
    .init("POST /p HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "POST", "/p", "empty chunked body"),
    .init("GET /a HTTP/1.1\r\nhOsT: a\r\n\r\n", "GET", "/a", "field names case-insensitive"),
    .init("GET / HTTP/1.1\r\nHost:a\r\n\r\n", "GET", "/", "no space after colon"),
    .init("GET / HTTP/1.1\r\nHost: \t a \t\r\n\r\n", "GET", "/", "optional whitespace around value"),
    .init("GET / HTTP/1.1\r\nHost: \r\n\r\n", "GET", "/", "empty Host"),
    .init("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", "GET", "/", "IPv6 Host"),
    .init("GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n", "GET", "/", "IPv6 Host without a port"),
    .init("GET / HTTP/1.1\r\nHost: storefront.example:8080\r\n\r\n", "GET", "/", "Host with a port"),
    .init("GET / HTTP/1.1\r\nHost: storefront.example:\r\n\r\n", "GET", "/", "Host with an empty port (port = *DIGIT)"),
    .init("GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n", "GET", "/", "IPv4 Host with a port"),
    .init("GET / HTTP/1.1\r\n\(H)X-Empty:\r\n\r\n", "GET", "/", "empty field value"),
    .init("GET / HTTP/1.1\r\n\(H)User-Agent: caf\u{e9}\r\n\r\n", "GET", "/", "obs-text in a value"),
    .init("OPTIONS * HTTP/1.1\r\n\(H)\r\n", "OPTIONS", "*", "asterisk-form"),
    .init("GET http://a/p?q=1 HTTP/1.1\r\n\(H)\r\n", "GET", "/p?q=1", "absolute-form"),
    .init("GET https://a HTTP/1.1\r\n\(H)\r\n", "GET", "/", "absolute-form without path"),
    .init("GET /%7Euser/a%20b HTTP/1.1\r\n\(H)\r\n", "GET", "/%7Euser/a%20b", "percent-encoding in target"),
    .init("PURGE /x HTTP/1.1\r\n\(H)\r\n", "PURGE", "/x", "extension method"),
    .init("GET / HTTP/1.1\r\n\(H)Expect: 100-continue\r\n\r\n", "GET", "/", "Expect on a request without body"),
]

let rejectRows: [RejectRow] = [
    .init("GET / HTTP/1.1\n\(H)\r\n", .bareLF, 400, "bare LF ends request line"),
    .init("GET / HTTP/1.1\r\nHost: a\n\r\n", .bareLF, 400, "bare LF ends a field"),
    .init("GET / HTTP/1.1\r\nHost: a\r\n\n", .bareLF, 400, "bare LF ends the head"),
    .init("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", .bareCR, 400, "bare CR in a value"),
    .init("GET /\r HTTP/1.1\r\n\(H)\r\n", .bareCR, 400, "bare CR in request line"),
    .init("GET / HTTP/1.1\r\n\(H) folded\r\n\r\n", .obsoleteLineFolding, 400, "obs-fold with space"),
    .init("GET / HTTP/1.1\r\n\(H)\tfolded\r\n\r\n", .obsoleteLineFolding, 400, "obs-fold with tab"),
    .init("GET / HTTP/1.1\r\nHost : a\r\n\r\n", .whitespaceBeforeColon, 400, "space before colon"),
    .init("GET / HTTP/1.1\r\nHost\t: a\r\n\r\n", .whitespaceBeforeColon, 400, "tab before colon"),
    .init("GET / HTTP/1.1\r\n\(H)No colon here\r\n\r\n", .invalidFieldName, 400, "line without colon"),
    .init("GET / HTTP/1.1\r\n\(H): empty name\r\n\r\n", .invalidFieldName, 400, "empty field name"),
    .init("GET / HTTP/1.1\r\n\(H)Bad(name): x\r\n\r\n", .invalidFieldName, 400, "separator in field name"),
    .init("GET / HTTP/1.1\r\n\(H)X: a\u{0}b\r\n\r\n", .invalidFieldValue, 400, "NUL in value"),
    .init("GET / HTTP/1.1\r\n\(H)X: a\u{7f}\r\n\r\n", .invalidFieldValue, 400, "DEL in value"),
    .init("GET / HTTP/1.1\r\n\(H)X: a\u{1}\r\n\r\n", .invalidFieldValue, 400, "control byte in value"),
    .init("GET / HTTP/1.1\r\n\r\n", .missingHost, 400, "HTTP/1.1 without Host"),
    .init("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", .multipleHost, 400, "two Host fields"),
    .init("GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", .multipleHost, 400, "two Host fields in 1.0"),
    .init("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", .invalidHost, 400, "space in Host"),
    .init("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", .invalidHost, 400, "slash in Host"),
    .init("GET / HTTP/1.1\r\nHost: storefront.example:evil\r\n\r\n", .invalidHost, 400, "a port that is not digits"),
    .init("GET / HTTP/1.1\r\nHost: a:80:80\r\n\r\n", .invalidHost, 400, "two ports"),
    .init("GET / HTTP/1.1\r\nHost: [::1]:x\r\n\r\n", .invalidHost, 400, "an IP literal's port not digits"),
    .init("GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n", .invalidHost, 400, "bytes after an IP literal"),
    .init("GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", .invalidHost, 400, "an IP literal unclosed"),
    .init("GET / HTTP/1.1\r\nHost: a]\r\n\r\n", .invalidHost, 400, "a bracket outside an IP literal"),
    .init("POST / HTTP/1.1\r\n\(H)Content-Length: 5, 5\r\n\r\nhello", .invalidContentLength, 400, "length list"),
    .init("POST / HTTP/1.1\r\n\(H)Content-Length: +5\r\n\r\nhello", .invalidContentLength, 400, "signed length"),
    .init("POST / HTTP/1.1\r\n\(H)Content-Length: 0x5\r\n\r\nhello", .invalidContentLength, 400, "hex length"),
    .init("POST / HTTP/1.1\r\n\(H)Content-Length: \r\n\r\n", .invalidContentLength, 400, "empty length"),
    .init("POST / HTTP/1.1\r\n\(H)Content-Length: 99999999999999999999\r\n\r\n", .invalidContentLength, 400, "overflowing length"),
    .init("POST / HTTP/1.1\r\n\(H)Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", .conflictingContentLength, 400, "two different lengths"),
    .init("POST / HTTP/1.1\r\n\(H)Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", .contentLengthWithTransferEncoding, 400, "CL with TE"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n", .contentLengthWithTransferEncoding, 400, "TE with CL"),
    .init("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", .transferEncodingInHTTP10, 400, "TE in HTTP/1.0"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: gzip\r\n\r\n", .chunkedNotFinal, 400, "chunked missing"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked, gzip\r\n\r\n", .chunkedNotFinal, 400, "chunked not final"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", .unsupportedTransferCoding, 501, "gzip then chunked"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", .unsupportedTransferCoding, 501, "chunked twice"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\nx\r\n\r\n", .invalidChunkSize, 400, "non-hex chunk size"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n-1\r\n\r\n", .invalidChunkSize, 400, "negative chunk size"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n", .invalidChunkSize, 400, "0x prefix"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n\r\n", .invalidChunkSize, 400, "empty chunk size"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFF\r\n", .chunkSizeOverflow, 400, "chunk size overflow"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n", .invalidChunkTerminator, 400, "chunk data too long"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n", .bareLF, 400, "bare LF after chunk size"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;a\u{1}\r\nabc\r\n0\r\n\r\n", .invalidChunkExtension, 400, "control in extension"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3 x\r\nabc\r\n0\r\n\r\n", .invalidChunkExtension, 400, "garbage after size"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;\r\nabc\r\n0\r\n\r\n", .invalidChunkExtension, 400, "a bare ; without a name"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;a;\r\nabc\r\n0\r\n\r\n", .invalidChunkExtension, 400, "a trailing ; without a name"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;=b\r\nabc\r\n0\r\n\r\n", .invalidChunkExtension, 400, "a value without a name"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;a=\r\nabc\r\n0\r\n\r\n", .invalidChunkExtension, 400, "= without a value"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;a=\"b\r\nabc\r\n0\r\n\r\n", .invalidChunkExtension, 400, "an unbalanced quote"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;a=\"b\\\r\nabc\r\n0\r\n\r\n", .invalidChunkExtension, 400, "a quoted pair cut by the end of the line"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;a=b c\r\nabc\r\n0\r\n\r\n", .invalidChunkExtension, 400, "two tokens in a value"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;a=\"b\"c\r\nabc\r\n0\r\n\r\n", .invalidChunkExtension, 400, "text after a quoted value"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;a b\r\nabc\r\n0\r\n\r\n", .invalidChunkExtension, 400, "two names without ;"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;a(b)\r\nabc\r\n0\r\n\r\n", .invalidChunkExtension, 400, "a delimiter in a name"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3;a=\"\u{7F}\"\r\nabc\r\n0\r\n\r\n", .invalidChunkExtension, 400, "DEL in a quoted value"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n3 \r\nabc\r\n0\r\n\r\n", .invalidChunkExtension, 400, "whitespace after the size without an extension"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n0\r\n folded\r\n\r\n", .obsoleteLineFolding, 400, "folded trailer"),
    .init("GET / HTTP/2.0\r\n\(H)\r\n", .unsupportedVersion, 505, "HTTP/2.0"),
    .init("GET / HTTP/0.9\r\n\(H)\r\n", .unsupportedVersion, 505, "HTTP/0.9"),
    .init("GET / HTTP/1.10\r\n\(H)\r\n", .invalidVersion, 400, "two-digit minor"),
    .init("GET / http/1.1\r\n\(H)\r\n", .invalidVersion, 400, "lowercase version"),
    .init("GET / HTTP/1\r\n\(H)\r\n", .invalidVersion, 400, "version without minor"),
    .init("GET  / HTTP/1.1\r\n\(H)\r\n", .invalidRequestLine, 400, "double space"),
    .init("GET / HTTP/1.1 \r\n\(H)\r\n", .invalidRequestLine, 400, "trailing space"),
    .init("GET\t/ HTTP/1.1\r\n\(H)\r\n", .invalidRequestLine, 400, "tab separator"),
    .init("GET /\r\n\(H)\r\n", .invalidRequestLine, 400, "no version"),
    .init("G(T / HTTP/1.1\r\n\(H)\r\n", .invalidMethod, 400, "separator in method"),
    .init("GET /a\"b HTTP/1.1\r\n\(H)\r\n", .invalidTarget, 400, "quote in target"),
    .init("GET /a%2 HTTP/1.1\r\n\(H)\r\n", .invalidTarget, 400, "truncated percent"),
    .init("GET /a%zz HTTP/1.1\r\n\(H)\r\n", .invalidTarget, 400, "non-hex percent"),
    .init("GET a HTTP/1.1\r\n\(H)\r\n", .invalidTarget, 400, "relative target"),
    .init("GET * HTTP/1.1\r\n\(H)\r\n", .invalidTarget, 400, "asterisk-form on GET"),
    .init("GET /\u{e9} HTTP/1.1\r\n\(H)\r\n", .invalidTarget, 400, "raw non-ASCII target"),
    .init("GET ftp://a/ HTTP/1.1\r\n\(H)\r\n", .invalidTarget, 400, "ftp absolute-form"),
    .init("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\n\(H)\r\n", .requestLineTooLong, 414, "request line over 8 KiB"),
    .init("GET / HTTP/1.1\r\n\(H)X: " + String(repeating: "a", count: 40000) + "\r\n\r\n", .headTooLarge, 431, "head over 32 KiB"),
    .init("GET / HTTP/1.1\r\n\(H)" + String(repeating: "X: 1\r\n", count: 101) + "\r\n", .tooManyHeaders, 431, "101 header fields"),
    .init("POST / HTTP/1.1\r\n\(H)Content-Length: 2000000\r\n\r\n", .bodyTooLarge, 413, "declared body over 1 MiB"),
    .init("POST / HTTP/1.1\r\n\(H)Transfer-Encoding: chunked\r\n\r\n200000\r\n", .bodyTooLarge, 413, "chunk over body limit"),
]

@Suite("HTTP request parser")
struct HTTPParserTableTests {
    @Test func rejectionRowsOutnumberAcceptanceRows() {
        #expect(rejectRows.count >= acceptRows.count)
    }

    @Test(arguments: acceptRows)
    func accepts(_ row: AcceptRow) throws {
        let bytes = Array(row.raw.utf8)
        for (way, result) in [("whole", decode(bytes, piece: 0)), ("byte by byte", decode(bytes, piece: 1)),
                              ("glued", decode(bytes + nextRequest, piece: 0))] {
            #expect(result.error == nil, "\(way): \(String(describing: result.error))")
            #expect(result.leftover == 0, "\(way)")
            guard let request = result.requests.first else {
                Issue.record("\(way): no request")
                continue
            }
            #expect(request.head.method == row.method, "\(way)")
            #expect(request.head.target == row.target, "\(way)")
            #expect(request.head.version == row.version, "\(way)")
            #expect(request.body == Array(row.body.utf8), "\(way)")
            if way == "glued" {
                #expect(result.requests.count == 2, "the glued request was not decoded")
                #expect(result.requests.last?.head.target == "/next")
            } else {
                #expect(result.requests.count == 1, "\(way)")
            }
        }
    }

    @Test(arguments: rejectRows)
    func rejects(_ row: RejectRow) {
        let bytes = Array(row.raw.utf8)
        for (way, result) in [("whole", decode(bytes, piece: 0)), ("byte by byte", decode(bytes, piece: 1)),
                              ("glued", decode(bytes + nextRequest, piece: 0))] {
            #expect(result.error == row.error, "\(way)")
            #expect(result.requests.isEmpty, "\(way): a rejected request must not be delivered")
        }
        #expect(row.error.status.code == row.status)
    }

    @Test func incompleteInputWaitsForMore() {
        let partials = ["GET / HTTP/1.1\r\nHost: a\r\n", "GET / HTTP/1.1\r", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhel",
                        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"]
        for partial in partials {
            let result = decode(Array(partial.utf8), piece: 0)
            #expect(result.error == nil && result.requests.isEmpty, "\(partial)")
        }
    }

    @Test func perRouteBodyLimitAppliesAfterTheHead() throws {
        var decoder = HTTPRequestDecoder()
        let bytes = Array("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789".utf8)
        let (event, consumed) = try bytes.withUnsafeBufferPointer { try decoder.decode($0) }
        guard case .head(let head) = event else {
            Issue.record("expected a head event")
            return
        }
        #expect(head.method == "POST")
        decoder.maximumBody = 5
        #expect(throws: HTTPParserError.bodyTooLarge) {
            try Array(bytes[consumed...]).withUnsafeBufferPointer { try decoder.decode($0) }
        }
    }

    @Test func keepAliveAndExpectFollowTheVersion() throws {
        let cases: [(String, Bool, Bool)] = [
            ("GET / HTTP/1.1\r\nHost: a\r\n\r\n", true, false),
            ("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", false, false),
            ("GET / HTTP/1.1\r\nHost: a\r\nConnection: Keep-Alive, Close\r\n\r\n", false, false),
            ("GET / HTTP/1.0\r\n\r\n", false, false),
            ("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true, false),
            ("GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n", true, true),
            ("GET / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n", false, false),
        ]
        for (raw, keepAlive, expectsContinue) in cases {
            let head = try #require(decode(Array(raw.utf8), piece: 0).requests.first).head
            #expect(head.wantsKeepAlive == keepAlive, "\(raw)")
            #expect(head.expectsContinue == expectsContinue, "\(raw)")
        }
    }
}

/// The head parser checks its limits once per run of ordinary bytes (it skips to the next
/// CR or LF eight bytes at a time), not once per byte. This table walks a request line and
/// a head across both limits, one byte at a time, and feeds each request whole and in
/// pieces of every size from 1 to 9 (so that the limit falls inside, at the start and at
/// the end of a word): the answer must be the per-byte rule's every time.
@Suite("HTTP request parser limits")
struct HTTPParserLimitTests {
    static let limits: HTTPLimits = {
        var limits = HTTPLimits()
        limits.maximumRequestLine = 32
        limits.maximumHeadBytes = 64
        return limits
    }()

    /// The per-byte rule: no byte of the request line at offset >= the request-line limit;
    /// no byte of the head other than CR and LF at offset >= the head limit.
    static func expected(_ requestLine: String, _ bytes: [UInt8]) -> HTTPParserError? {
        if requestLine.utf8.count > limits.maximumRequestLine { return .requestLineTooLong }
        let headEnd = bytes.count - 4
        if let last = bytes[..<headEnd].lastIndex(where: { $0 != 0x0D && $0 != 0x0A }), last >= limits.maximumHeadBytes {
            return .headTooLarge
        }
        return nil
    }

    @Test(arguments: 20...44)
    func requestLineAcrossItsLimit(_ length: Int) {
        // "GET /" + target + " HTTP/1.1" is `length` bytes.
        let requestLine = "GET /" + String(repeating: "a", count: length - 14) + " HTTP/1.1"
        let bytes = Array((requestLine + "\r\nHost: a\r\n\r\n").utf8)
        check(requestLine, bytes)
    }

    @Test(arguments: 50...80)
    func headAcrossItsLimit(_ length: Int) {
        // A head of `length` bytes before its final CRLF CRLF.
        let prefix = "GET / HTTP/1.1\r\nHost: a\r\nX: "
        let bytes = Array((prefix + String(repeating: "b", count: length - prefix.utf8.count) + "\r\n\r\n").utf8)
        check("GET / HTTP/1.1", bytes)
    }

    func check(_ requestLine: String, _ bytes: [UInt8]) {
        let want = Self.expected(requestLine, bytes)
        for piece in 0...9 {
            let result = decode(bytes, piece: piece, limits: Self.limits)
            #expect(result.error == want, "pieces of \(piece)")
            #expect(result.requests.count == (want == nil ? 1 : 0), "pieces of \(piece)")
        }
    }
}
