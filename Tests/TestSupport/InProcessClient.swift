import Dispatch
import Foundation
import HTTPCore
import HTTPServer
import Synchronization

/// A router called without a socket, the way HummingbirdTesting's `.router` sits beside
/// `.live`: the request's bytes are decoded by HTTPCore's decoder with the route's
/// admission check and body limit at the end of the head, as a connection decodes them, answered by the router (a deferred route's answer
/// awaited), and the response serialized and read back as a `Reply`. What it leaves out is
/// only what a socket adds: timeouts, pipelining, backpressure, the access log and metrics.
public struct InProcessClient: Sendable {
    public let router: Router
    public let limits: HTTPLimits

    public init(router: Router, limits: HTTPLimits = HTTPLimits()) {
        self.router = router
        self.limits = limits
    }

    /// One request, as written on the wire.
    public func call(_ raw: [UInt8]) -> Reply {
        var decoder = HTTPRequestDecoder(limits: limits)
        var input = raw[...]
        var request: HTTPRequest?
        var admittedAs: String?
        do throws(HTTPParserError) {
            while request == nil {
                let step = try Array(input).withUnsafeBufferPointer { (bytes) throws(HTTPParserError) in try decoder.decode(bytes) }
                input = input.dropFirst(step.consumed)
                switch step.event {
                case .needMoreData:
                    guard !input.isEmpty else { return Reply(status: 0, head: "incomplete request", body: []) }
                case .head(let head):
                    // As the connection does: the route's check and limit apply before a body byte is read.
                    switch router.decide(head) {
                    case .refuse(let response): return Self.reply(response, isHead: false)
                    case .read(let limit, let admitted):
                        if let limit { decoder.maximumBody = limit }
                        admittedAs = admitted
                    }
                case .request(let decoded):
                    request = decoded
                }
            }
        } catch {
            return Self.reply(HTTPResponse.error(error.status, message: error.message), isHead: false)
        }
        guard let request else { return Reply(status: 0, head: "no request", body: []) }
        let answered = DispatchSemaphore(value: 0)
        let response = Mutex<HTTPResponse?>(nil)
        router.respond(to: request, admittedAs: admittedAs) { answer in
            response.withLock { $0 = answer }
            answered.signal()
        }
        guard answered.wait(timeout: .now() + 60) == .success, let answer = response.withLock({ $0 }) else {
            return Reply(status: 0, head: "no answer within 60 s", body: [])
        }
        return Self.reply(answer, isHead: request.head.method == "HEAD")
    }

    private static func reply(_ response: HTTPResponse, isHead: Bool) -> Reply {
        var bytes: [UInt8] = []
        HTTPResponseSerializer.serialize(response, date: HTTPDate.format(secondsSince1970: Int(Date().timeIntervalSince1970)),
                                         isHead: isHead, keepAlive: false, into: &bytes)
        return Reply(wire: bytes)
    }
}
