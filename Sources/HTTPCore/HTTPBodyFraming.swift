/// How a request's body is delimited (RFC 9112 §6.3).
public enum HTTPBodyFraming: Hashable, Sendable {
    case none
    case contentLength(Int)
    case chunked

    /// Applies RFC 9112 §6.1–6.3 to a head, strictly.
    public static func of(_ head: HTTPRequestHead) throws(HTTPParserError) -> HTTPBodyFraming {
        // Most requests have neither field: two filter checks, no list made.
        guard head.headers.mayHave("Transfer-Encoding") || head.headers.mayHave("Content-Length") else { return .none }
        let transferEncoding = head.headers.tokens("Transfer-Encoding")
        let contentLengths = head.headers.values("Content-Length")
        if !transferEncoding.isEmpty || head.headers["Transfer-Encoding"] != nil {
            // §6.1: Content-Length with Transfer-Encoding may be request smuggling: reject.
            guard contentLengths.isEmpty else { throw .contentLengthWithTransferEncoding }
            // §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing.
            guard head.version == .http1_1 else { throw .transferEncodingInHTTP10 }
            // §6.3 (4): chunked must be final, else the length cannot be known: 400.
            guard transferEncoding.last == "chunked" else { throw .chunkedNotFinal }
            // §6.1: a coding we do not implement (gzip, or chunked twice) is 501.
            guard transferEncoding.count == 1 else { throw .unsupportedTransferCoding }
            return .chunked
        }
        guard let first = contentLengths.first else { return .none }
        // RFC 9110 §8.6: 1*DIGIT; repeated identical lines are the same value, a list is not accepted.
        var length = 0
        for value in contentLengths {
            guard !value.isEmpty, value.utf8.allSatisfy(isDecimalDigit) else { throw .invalidContentLength }
            guard value == first else { throw .conflictingContentLength }
        }
        for digit in first.utf8 {
            let (shifted, overflow1) = length.multipliedReportingOverflow(by: 10)
            let (added, overflow2) = shifted.addingReportingOverflow(Int(digit - 0x30))
            guard !overflow1, !overflow2 else { throw .invalidContentLength }
            length = added
        }
        return length == 0 ? .none : .contentLength(length)
    }
}
