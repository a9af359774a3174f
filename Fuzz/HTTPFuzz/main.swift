// libFuzzer target for HTTPCore's request decoder and chunked decoder (`make fuzz`).
//
// Only declarations: built with -parse-as-library for fuzzing, libFuzzer supplies `main`
// (and replays files given to it: `.build-fuzz/debug/HTTPFuzz crash-1234`); an ordinary
// build makes a program that does nothing.
import HTTPCore

/// Property: whatever the bytes, decoding never traps, never consumes more than it was
/// given, and gives the same requests (or the same error) fed whole as fed in pieces
/// whose sizes come from the input itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    var limits = HTTPLimits()
    limits.maximumHeadBytes = 4096
    limits.maximumRequestLine = 1024
    limits.maximumBody = 8192
    let whole = decodeAll(bytes, pieceSize: { _ in bytes.count }, limits: limits)
    let split = decodeAll(bytes, pieceSize: { index in 1 + Int(bytes.isEmpty ? 0 : bytes[index % bytes.count] % 7) }, limits: limits)
    precondition(whole == split, "decoding differs when the input is split")
    var chunked = ChunkedDecoder(limits: limits)
    var body: [UInt8] = []
    if let consumed = try? bytes.withUnsafeBufferPointer({ (buffer) throws(HTTPParserError) in try chunked.decode(buffer, into: &body) }) {
        precondition(consumed <= bytes.count)
        precondition(body.count <= limits.maximumBody)
    }
    return 0
}

struct Outcome: Equatable {
    var requests: [HTTPRequest] = []
    var error: HTTPParserError?
}

func decodeAll(_ bytes: [UInt8], pieceSize: (Int) -> Int, limits: HTTPLimits) -> Outcome {
    var decoder = HTTPRequestDecoder(limits: limits)
    var buffer: [UInt8] = []
    var outcome = Outcome()
    var offset = 0
    while offset < bytes.count {
        let end = min(bytes.count, offset + max(1, pieceSize(offset)))
        buffer.append(contentsOf: bytes[offset..<end])
        offset = end
        while true {
            let step: (event: HTTPRequestDecoder.Event, consumed: Int)
            do throws(HTTPParserError) {
                step = try buffer.withUnsafeBufferPointer { (input) throws(HTTPParserError) in try decoder.decode(input) }
            } catch {
                outcome.error = error
                return outcome
            }
            precondition(step.consumed <= buffer.count)
            buffer.removeFirst(step.consumed)
            if case .request(let request) = step.event { outcome.requests.append(request) }
            if case .needMoreData = step.event { break }
        }
    }
    return outcome
}
