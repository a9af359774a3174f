import Foundation
import HTTPCore
@testable import HTTPServer
import ManifestStore
import RouteEngine
import Synchronization
import Testing
import TestSupport
@testable import WaymarkAPI

/// A change's new generation is prepared before the change is answered, while readers are
/// answered at once from the previous generation (`GenerationPreparer`): manifests, landings
/// and associated-domain files never wait for a build after a change, and whoever made the
/// change reads what they wrote.
@Suite("Generation preparation", .serialized)
struct GenerationPreparationTests {
    static let manifest = "/v1/manifest?platform=ios&version=5.3.0"
    /// A desktop: its landing is a 302 (an iPhone gets the hand-off page, a 200).
    static let browser = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36"

    /// How the router answers `request`: at once on the loop (its status and ETag), or
    /// deferred to a lane (nil).
    static func onTheLoop(_ router: Router, _ target: String, headers: [(String, String)], method: String = "GET") -> (status: Int, etag: String?, body: [UInt8])? {
        let head = HTTPRequestHead(method: method, target: target, headers: HTTPHeaders(headers))
        guard case .response(let response, _) = router.route(HTTPRequest(head: head)) else { return nil }
        return (response.status.code, response.headers["ETag"], response.body)
    }

    struct Seen: Sendable {
        var manifest: (status: Int, etag: String?, body: [UInt8])?
        var notModified: (status: Int, etag: String?, body: [UInt8])?
        var landing: (status: Int, etag: String?, body: [UInt8])?
        var association: (status: Int, etag: String?, body: [UInt8])?
        var stale = false
    }

    @Test func readersGetThePreviousGenerationWhileTheNextIsPreparedAndThePublisherReadsItsWrite() throws {
        let service = try LiveService(transport: .inProcess)
        let context = service.api.context
        let router = try service.api.router()
        let read = [("Authorization", "Bearer \(service.tokens[.manifestRead]!)"), ("Host", "waymark.test")]
        // Revision 1 served: the view, the landing table and the association file are made.
        let before = service.call("GET", Self.manifest, token: service.tokens[.manifestRead])
        #expect(before.status == 200)
        #expect(service.call("GET", "/product/p1", host: "storefront.example", headers: [("User-Agent", Self.browser)]).status == 302)
        let association = service.call("GET", "/.well-known/apple-app-site-association", host: "storefront.example")
        #expect(association.status == 200 && !association.text.contains("/campaign/prepared"))
        let oldTable = try #require(context.landings.newestTable?.generation)

        // Look at what readers get while revision 2's generation is prepared: the API's own
        // hooks, with a look between them (put back as the API has them below).
        let seen = Mutex(Seen())
        let preparer = context.preparer
        service.store.observeChanges(before: { [weak preparer] generation in preparer?.begin(generation) },
                                     after: { [weak preparer] generation in
            guard let preparer else { return }
            let landing = [("Host", "storefront.example"), ("User-Agent", Self.browser)]
            let appleFile = [("Host", "storefront.example")]
            preparer.prepare(generation) {
                seen.withLock { seen in
                    seen.stale = preparer.answersStale(for: generation)
                    seen.manifest = Self.onTheLoop(router, Self.manifest, headers: read)
                    seen.notModified = Self.onTheLoop(router, Self.manifest, headers: read + [("If-None-Match", before["ETag"]!)])
                    seen.landing = Self.onTheLoop(router, "/product/p1", headers: landing)
                    seen.association = Self.onTheLoop(router, "/.well-known/apple-app-site-association", headers: appleFile)
                }
                preparer.make(generation: generation)
            }
        })
        defer { service.api.observeStore() }
        let publish = service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish], headers: rev1,
                                   body: publishBody(extraRoute: "prepared"))
        #expect(publish.status == 201, "\(publish.text.prefix(200))")

        let during = seen.withLock { $0 }
        #expect(during.stale)
        #expect(during.manifest?.status == 200 && during.manifest?.etag == before["ETag"],
                "while revision 2 is prepared, revision 1's view answers on the loop: \(String(describing: during.manifest))")
        #expect(during.notModified?.status == 304, "and its ETag still matches")
        #expect(during.landing?.status == 302, "the previous landing table answers on the loop")
        #expect(during.association?.status == 200 && during.association.map { String(decoding: $0.body, as: UTF8.self) } == association.text,
                "the previous association file answers on the loop")
        // Right after the 201, on the loop: the view made by the preparation, not on request.
        let onLoop = try #require(Self.onTheLoop(router, Self.manifest, headers: read), "the prepared view is answered on the loop")
        #expect(onLoop.status == 200 && onLoop.etag?.hasPrefix("\"m2-") == true, "the publisher reads its write: \(onLoop.etag ?? "none")")
        #expect(service.call("GET", Self.manifest, token: service.tokens[.manifestRead])["ETag"] == onLoop.etag)
        #expect(context.landings.newestTable?.generation ?? 0 > oldTable, "the landing table was made for the new generation")
        let newFile = try #require(Self.onTheLoop(router, "/.well-known/apple-app-site-association", headers: [("Host", "storefront.example")]),
                                   "the new association file is answered on the loop")
        #expect(String(decoding: newFile.body, as: UTF8.self).contains("/campaign/prepared"))
        #expect(!context.preparer.answersStale(for: service.store.generation))
        let metrics = service.call("GET", "/metrics", token: service.tokens[.telemetryRead]).text
        #expect(metrics.contains("waymark_generations_prepared_total 1"), "\(metrics.split(separator: "\n").filter { $0.contains("generation") })")
    }

    @Test func aRolloutsCandidateAndStableViewsAreBothReadyWhenItStarts() throws {
        let service = try LiveService(transport: .inProcess)
        let router = try service.api.router()
        let read = [("Authorization", "Bearer \(service.tokens[.manifestRead]!)"), ("Host", "waymark.test")]
        #expect(service.call("GET", Self.manifest, token: service.tokens[.manifestRead]).status == 200)
        #expect(Self.onTheLoop(router, Self.manifest, headers: read)?.etag?.hasPrefix("\"m1-") == true)
        guard case .object(var body) = try JSONParser().parse(publishBody(extraRoute: "candidate")) else { Issue.record("body"); return }
        body["rollout"] = [:]
        let start = service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish], headers: rev1, body: JSONValue.object(body).serialized())
        #expect(start.status == 201, "\(start.text.prefix(200))")
        // Cohort 0 gets the candidate at the first step, cohort 99 the stable revision: both made before the 201.
        let candidate = Self.onTheLoop(router, Self.manifest + "&cohort=0", headers: read)
        let stable = Self.onTheLoop(router, Self.manifest + "&cohort=99", headers: read)
        #expect(candidate?.status == 200 && candidate?.etag?.hasPrefix("\"m2-") == true, "\(String(describing: candidate?.etag))")
        #expect(stable?.status == 200 && stable?.etag?.hasPrefix("\"m1-") == true, "\(String(describing: stable?.etag))")
        // A build nothing fetched before is made on its first request, off the loop.
        #expect(Self.onTheLoop(router, "/v1/manifest?platform=ios&version=5.2.0", headers: read) == nil)
        #expect(service.call("GET", "/v1/manifest?platform=ios&version=5.2.0", token: service.tokens[.manifestRead]).status == 200)
    }
    @Test func filesMadeFromAnOlderSnapshotNeverReplaceANewerGenerationsAndTheFilesBeforeAnswerWhileItIsPrepared() throws {
        let service = try LiveService(transport: .inProcess)
        let cache = ManifestCache()
        let old = service.store.snapshot
        let oldGeneration = service.store.generation
        #expect(service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish], headers: rev1,
                             body: publishBody(extraRoute: "newer")).status == 201)
        let new = service.store.snapshot
        func files(_ snapshot: StoreSnapshot) -> AssociatedDomainFiles {
            AssociatedDomainFiles(schemas: snapshot.orderedSchemas.map(\.schema),
                                  routes: (try? AssociatedDomainEndpoints.servedRoutes(snapshot, service.api.context.documents)) ?? [],
                                  host: "storefront.example")
        }
        let made = cache.associatedDomains(old, generation: oldGeneration, host: "storefront.example") { files($0) }
        #expect(cache.keptAssociatedDomains(host: "storefront.example") == made)
        // The new generation's files are prepared for the host kept before.
        cache.prepareAssociatedDomains(new, generation: oldGeneration + 1, hosts: ["storefront.example"]) { _ throws(Refusal) in files(new) }
        #expect(cache.cachedAssociatedDomains(new, host: "storefront.example") == files(new))
        // A build from the older snapshot that ends late is answered but not kept.
        _ = cache.associatedDomains(old, generation: oldGeneration, host: "storefront.example") { files($0) }
        #expect(cache.keptAssociatedDomains(host: "storefront.example") == files(new))
        #expect(cache.cachedAssociatedDomains(old, host: "storefront.example") == nil)
        #expect(files(new) != made, "the two generations' files differ (the new route)")
    }

    @Test func viewsAreMadeAheadOnlyForBuildsFetchedInTheLastGenerations() throws {
        let service = try LiveService(transport: .inProcess)
        let context = service.api.context
        #expect(service.call("GET", "/v1/manifest?platform=ios&version=5.2.0", token: service.tokens[.manifestRead]).status == 200)
        let first = service.store.generation
        for number in 1...(ManifestCache.servedWindow + 1) {
            #expect(service.call("GET", Self.manifest, token: service.tokens[.manifestRead]).status == 200)
            let publish = service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish], headers: [("If-Match", "\"rev-\(number)\"")],
                                       body: publishBody(extraRoute: "n\(number)"))
            #expect(publish.status == 201, "\(publish.text.prefix(200))")
            // 5.2.0 was fetched once: its views are made ahead for the window's generations, then on request.
            let ahead = service.store.generation - first < ManifestCache.servedWindow
            let builds = Set(context.manifests.servedBuilds.keys.map(\.version))
            #expect(builds == (ahead ? ["5.2.0", "5.3.0"] : ["5.3.0"]), "after publish \(number): \(builds.sorted())")
        }
    }
}
