import Foundation
import ManifestStore
import Testing
import TestSupport

/// A request with a body is judged at the end of its head, over a real socket: without
/// the token its route needs it is answered at once, its body never read nor invited by
/// `100 Continue`, and the answer survives the body the client is still sending (the
/// server closes lingering, reading and discarding, rather than resetting).
@Suite("Admission at the end of the head, over loopback", .serialized)
struct HeadAdmissionTests {
    static func head(_ method: String, _ target: String, token: String?, length: Int, expectContinue: Bool = false) -> String {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: waymark.test\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: \(length)\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if expectContinue { head += "Expect: 100-continue\r\n" }
        return head + "\r\n"
    }

    @Test func anAnonymousHugeBodyIsRefusedBeforeItIsInvitedOrRead() throws {
        let service = try LiveService()
        let client = try LoopbackClient(port: service.port)
        client.send(Self.head("POST", "/v1/revisions", token: nil, length: 16 << 20, expectContinue: true))
        let answer = client.readAll()
        #expect(answer.hasPrefix("HTTP/1.1 401 "), "\(answer.prefix(200))")
        #expect(!answer.contains("100 Continue"), "a refused body is never invited")
        #expect(answer.contains("WWW-Authenticate: Bearer"))
        #expect(answer.contains("Connection: close"))
        let refused = try service.store.auditEntries().filter { $0["outcome"]?.stringValue == "refused" }
        #expect(refused.last?["reason"]?.stringValue == "noToken" && refused.last?["action"]?.stringValue == "publish")
        #expect(refused.last?["peer"]?.stringValue == "127.0.0.0/24", "the refusal names the client's network: \(String(describing: refused.last))")
    }

    @Test(arguments: [("POST", "/v1/revisions", Scope.telemetryWrite, 403), ("PUT", "/v1/schemas/ios/5.3.0", .routesPublish, 403),
                      ("POST", "/v1/validate", .telemetryRead, 403), ("POST", "/v1/telemetry", .manifestRead, 403)])
    func aBodySentAnywayDoesNotDestroyTheAnswer(method: String, target: String, scope: Scope, status: Int) throws {
        let service = try LiveService()
        let client = try LoopbackClient(port: service.port)
        // The head and half a megabyte of a 16 MiB body, as a client that does not wait.
        client.send(Self.head(method, target, token: service.tokens[scope], length: 16 << 20))
        client.send(bytes: [UInt8](repeating: UInt8(ascii: " "), count: 512 << 10))
        let answer = client.readAll()
        #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(method) \(target) with \(scope.rawValue): \(answer.prefix(200))")
        #expect(answer.contains("\"forbidden\""))
        #expect(service.store.snapshot.revisions.count == 1 && service.store.snapshot.schemas.count == 2, "nothing changed")
    }

    @Test func anAdmittedBodyIsReadAndItsSenderNamed() throws {
        let service = try LiveService()
        let body = publishBody(extraRoute: "admitted", message: "through the head check")
        let client = try LoopbackClient(port: service.port)
        client.send(Self.head("POST", "/v1/revisions", token: service.tokens[.routesPublish], length: body.utf8.count, expectContinue: true)
            .replacingOccurrences(of: "\r\n\r\n", with: "\r\nIf-Match: \"rev-1\"\r\n\r\n"))
        let interim = client.read(responses: 1, headOnly: true)
        #expect(interim.first?.head.hasPrefix("HTTP/1.1 100") == true, "an admitted body is invited")
        client.send(body)
        let answer = client.readAll()
        #expect(answer.contains("HTTP/1.1 201 "), "\(answer.prefix(300))")
        #expect(service.store.snapshot.revision(2)?.author == "routes:publish", "the name the head check found is the author")
    }
}
