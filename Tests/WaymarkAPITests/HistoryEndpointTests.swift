import Foundation
import ManifestStore
import RouteEngine
import Testing
import TestSupport
@testable import WaymarkAPI

/// Old revisions read from disk through the API: what is kept of them is bounded, and a
/// damaged one is a 500 naming its file while everything else answers.
@Suite("History endpoints", .serialized)
struct HistoryEndpointTests {
    /// The storefront routes with one campaign of its own, so each revision differs.
    static func routes(_ id: String) -> [UInt8] {
        guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else { return [] }
        routes.append(["id": .string(id), "patterns": [.string("/campaign/\(id)")], "destination": "home", "owner": "marketing"])
        document["routes"] = .array(routes)
        return JSONValue.object(document).serializedBytes(pretty: true)
    }

    /// Revisions 2…12 published on the seed's revision 1.
    static func service() throws -> LiveService {
        let service = try LiveService(transport: .inProcess)
        for number in 2...12 {
            guard case .published = try service.store.publish(routes: routes("c\(number)"), base: number - 1, author: "m", message: "", now: Date()) else {
                throw StoreError.badSeed("revision \(number) was not published")
            }
        }
        return service
    }

    @Test func theRevisionListIsMadeOncePerGenerationAndNeverOlderThanAChange() throws {
        let service = try LiveService(transport: .inProcess)
        let read = service.tokens[.routesRead]
        let first = service.call("GET", "/v1/revisions", token: read)
        #expect(first.status == 200 && first.json["current"]?.intValue == 1)
        #expect(service.api.context.revisionList.generation == service.store.generation, "kept for the generation")
        #expect(service.call("GET", "/v1/revisions", token: read).body == first.body)
        #expect(service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish], headers: rev1,
                             body: publishBody(extraRoute: "listed")).status == 201)
        let after = service.call("GET", "/v1/revisions", token: read)
        #expect(after.json["current"]?.intValue == 2 && after.json["revisions"]?.arrayValue?.count == 2, "\(after.text.prefix(200))")
        #expect(after["ETag"] == "\"rev-2\"")
    }

    @Test func whatIsKeptOfOldRevisionsIsBounded() throws {
        let service = try Self.service()
        let token = service.tokens[.routesRead]
        for number in 1...11 {
            let reply = service.call("GET", "/v1/revisions/\(number)", token: token)
            #expect(reply.status == 200, "\(number)")
            if number > 1 { #expect(reply.json["routes"] == (try JSONParser().parse(Self.routes("c\(number)"))), "\(number)") }
            let kept = service.api.context.documents.keptNumbers
            let older = kept.filter { !service.store.snapshot.pinned.contains($0) }
            #expect(older.count <= RevisionDocuments.historyCapacity, "after \(number): \(kept)")
            #expect(older.last == number, "the one just read is kept, most recent last: \(kept)")
        }
        #expect(service.call("GET", "/v1/revisions/2/diff/11", token: token).json["added"] == ["c11"])
    }

    @Test func aDamagedOldRevisionIsA500NamingItsFileAndNothingElseBreaks() throws {
        let service = try Self.service()
        let token = service.reader
        let file = service.path + "/revisions/00000003"
        var bytes = [UInt8](FileManager.default.contents(atPath: file)!)
        bytes[bytes.count - 5] ^= 0x20
        #expect(FileManager.default.createFile(atPath: file, contents: Data(bytes)), "the damaged copy was not written")
        for target in ["/v1/revisions/3", "/v1/revisions/3/diff/12", "/v1/revisions/2/diff/3"] {
            let reply = service.call("GET", target, token: token)
            #expect(reply.status == 500 && reply.errorCode == "storeFailed" && reply.text.contains("revisions/00000003"), "\(target): \(reply.text.prefix(300))")
        }
        let rollback = service.call("POST", "/v1/revisions/3/rollback", token: service.tokens[.routesPublish], headers: [("If-Match", "\"rev-12\"")])
        #expect(rollback.status == 500 && rollback.text.contains("revisions/00000003"), "\(rollback.text.prefix(300))")
        #expect(service.store.snapshot.revisions.count == 12)
        // Every other revision, the manifest and a rollback to another old one still work.
        #expect(service.call("GET", "/v1/revisions/4", token: token).status == 200)
        #expect(service.call("GET", "/v1/manifest?platform=ios&version=5.3.0", token: token).json["revision"] == 12)
        let other = service.call("POST", "/v1/revisions/4/rollback", token: service.tokens[.routesPublish], headers: [("If-Match", "\"rev-12\"")])
        #expect(other.status == 201, "\(other.text.prefix(300))")
    }
}
