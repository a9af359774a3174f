import HTTPCore

/// What feeding bytes to a decoder produced: the requests, then an error if one stopped it.
struct Decoded: Equatable {
    var requests: [HTTPRequest] = []
    var error: HTTPParserError?
    /// Bytes left over that were not a complete request.
    var leftover = 0
}

/// Feeds `bytes` to a fresh decoder in pieces of `piece` bytes (0 = all at once), the way a
/// connection does: append to a buffer, decode until it needs more, drop what was consumed.
func decode(_ bytes: [UInt8], piece: Int, limits: HTTPLimits = HTTPLimits()) -> Decoded {
    var decoder = HTTPRequestDecoder(limits: limits)
    var buffer: [UInt8] = []
    var result = Decoded()
    var offset = 0
    while offset < bytes.count {
        let end = piece == 0 ? bytes.count : min(bytes.count, offset + piece)
        buffer.append(contentsOf: bytes[offset..<end])
        offset = end
        do throws(HTTPParserError) {
            loop: while true {
                let (event, consumed) = try buffer.withUnsafeBufferPointer { (bytes) throws(HTTPParserError) in try decoder.decode(bytes) }
                buffer.removeFirst(consumed)
                switch event {
                case .needMoreData: break loop
                case .head: continue
                case .request(let request): result.requests.append(request)
                }
            }
        } catch {
            result.error = error
            return result
        }
    }
    result.leftover = buffer.count
    return result
}

/// The request every glued row is followed by.
let nextRequest = Array("GET /next HTTP/1.1\r\nHost: b\r\n\r\n".utf8)
