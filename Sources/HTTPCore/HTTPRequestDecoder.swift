/// Turns a byte stream into requests: the head parser, then the body by its framing.
/// Feed it whatever arrived; it reports how many bytes it consumed, so pipelined requests
/// are decoded one after another from the same buffer.
public struct HTTPRequestDecoder: Sendable {
    public enum Event: Hashable, Sendable {
        /// Nothing complete yet; call again with more bytes.
        case needMoreData
        /// A head whose body has not been read yet: the caller may send `100 Continue`,
        /// set `maximumBody` for the route, or refuse before the body arrives.
        case head(HTTPRequestHead)
        /// A complete request.
        case request(HTTPRequest)
    }

    private enum State: Sendable {
        case head
        case awaitingBody(HTTPRequestHead, HTTPBodyFraming)
        case fixed(HTTPRequestHead, remaining: Int, body: [UInt8])
        case chunked(HTTPRequestHead, ChunkedDecoder, body: [UInt8])
    }

    public let limits: HTTPLimits
    private var parser: HTTPHeadParser
    private var state = State.head
    /// The body limit for the current request; reset to `limits.maximumBody` for each head.
    public var maximumBody: Int
    /// Body bytes of the current request decoded so far (a chunked body's data, not its
    /// framing): what a connection reserves memory for as a chunked body arrives.
    public private(set) var bodyBytes = 0

    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
        parser = HTTPHeadParser(limits: limits)
        maximumBody = limits.maximumBody
    }

    /// Decodes the next event from `bytes`.
    /// - Returns: the event and how many bytes of `bytes` it consumed.
    public mutating func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws(HTTPParserError) -> (event: Event, consumed: Int) {
        switch state {
        case .head:
            switch try parser.parse(bytes) {
            case .needMoreData:
                return (.needMoreData, 0)
            case .complete(let head, let consumed):
                maximumBody = limits.maximumBody
                bodyBytes = 0
                let framing = try HTTPBodyFraming.of(head)
                if framing == .none { return (.request(HTTPRequest(head: head)), consumed) }
                state = .awaitingBody(head, framing)
                return (.head(head), consumed)
            }
        case .awaitingBody(let head, let framing):
            switch framing {
            case .contentLength(let length):
                guard length <= maximumBody else { throw .bodyTooLarge }
                state = .fixed(head, remaining: length, body: [])
            default:
                state = .chunked(head, ChunkedDecoder(limits: limits, maximumBody: maximumBody), body: [])
            }
            return try decode(bytes)
        case .fixed(let head, let remaining, var body):
            state = .head  // move the body out of `state`, so appending does not copy it
            let take = min(remaining, bytes.count)
            if body.isEmpty { body.reserveCapacity(remaining) }
            body.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[0..<take]))
            bodyBytes = body.count
            if take == remaining {
                state = .head
                return (.request(HTTPRequest(head: head, body: body)), take)
            }
            state = .fixed(head, remaining: remaining - take, body: body)
            return (.needMoreData, take)
        case .chunked(let head, var decoder, var body):
            state = .head  // move the body out of `state`, so appending does not copy it
            let consumed = try decoder.decode(bytes, into: &body)
            bodyBytes = body.count
            if decoder.isComplete { return (.request(HTTPRequest(head: head, body: body)), consumed) }
            state = .chunked(head, decoder, body: body)
            return (.needMoreData, consumed)
        }
    }
}
