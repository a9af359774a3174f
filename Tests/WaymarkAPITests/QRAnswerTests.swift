import Foundation
import Testing
import TestSupport
@testable import WaymarkAPI

/// `GET /v1/qr` answers a code asked before from its cache of answers, by its parameters,
/// on the loop; anything refused is refused every time and never kept.
@Suite("QR answers", .serialized)
struct QRAnswerTests {
    static let link = "https://storefront.example/p/1"

    /// Each row: a query, its status, and how many answers are kept after it (the rows run
    /// in order on one service).
    static let rows: [(String, Int, Int)] = [
        ("url=\(link)", 200, 1),
        ("url=\(link)", 200, 1),
        ("url=\(link)&format=png", 200, 2),
        ("url=\(link)&format=png&scale=4", 200, 3),
        ("url=\(link)&ecc=H&format=png&scale=4", 200, 4),
        ("url=\(link)&format=png&scale=4", 200, 4),
        ("url=https://elsewhere.example/p/1", 422, 4),
        ("url=\(link)&format=gif", 400, 4),
        ("url=\(link)&scale=33", 400, 4),
        ("url=\(link)&ecc=X", 400, 4),
        ("url=http://storefront.example/p/1", 400, 4),
        ("url=\(link)&format=png&scale=32&ecc=H", 200, 5),
    ]

    @Test func codesAreKeptByTheirParameters() throws {
        let service = try LiveService(transport: .inProcess)
        let token = service.tokens[.routesRead]
        var first: [String: [UInt8]] = [:]
        for (query, status, kept) in Self.rows {
            let reply = service.call("GET", "/v1/qr?" + query, token: token)
            #expect(reply.status == status, "\(query): \(reply.text.prefix(200))")
            #expect(service.api.context.qrAnswers.count == kept, "\(query)")
            if status == 200 {
                #expect(first[query, default: reply.body] == reply.body, "\(query): the same answer again")
                first[query] = reply.body
                if query.contains("png") { #expect(reply.body.count <= QREndpoints.maximumPNGBytes) }
            }
        }
    }
}
