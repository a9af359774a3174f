import Dispatch
import Foundation
import Synchronization
import Testing
import TestSupport
@testable import WaymarkAPI

/// Work that grows with a document runs on the work queue, never on a loop: while the
/// queue is full, what is cached is still answered at once, and what needs work is refused
/// with `503 busy` and `Retry-After` rather than queued without bound or run on the loop.
@Suite("Off-loop work", .serialized)
struct OffLoopWorkTests {
    /// Holds `count` jobs of `queue` until `release` is called.
    final class Hold: Sendable {
        private let gate = DispatchSemaphore(value: 0)
        private let started = DispatchSemaphore(value: 0)
        let count: Int

        init(_ queue: WorkQueue, jobs count: Int) {
            self.count = count
            let (gate, started) = (gate, started)
            var held = 0
            // A job that just answered its request leaves the count only as it returns, a
            // moment after its client has the answer: retry briefly rather than race it.
            for _ in 0..<count {
                var accepted = false
                for _ in 0..<1_000 where !accepted {
                    accepted = queue.submit {
                        started.signal()
                        gate.wait()
                    }
                    if !accepted { usleep(1_000) }
                }
                #expect(accepted, "the queue had room for the held jobs")
                if accepted { held += 1 }
            }
            for _ in 0..<held { started.wait() }
        }

        func release() {
            for _ in 0..<count { gate.signal() }
        }
    }

    @Test func aFullQueueRefusesMoreAndTakesWorkAgainOnceFree() {
        let queue = WorkQueue(capacity: 2)
        let hold = Hold(queue, jobs: 2)
        #expect(queue.queued == 2)
        #expect(!queue.submit {}, "a third job is refused")
        #expect(queue.refused.load(ordering: .relaxed) == 1)
        hold.release()
        let done = DispatchSemaphore(value: 0)
        var accepted = false
        for _ in 0..<1_000 where !accepted {  // the held jobs leave the count as they return
            accepted = queue.submit { done.signal() }
            if !accepted { usleep(1_000) }
        }
        #expect(accepted)
        done.wait()
    }

    @Test func revisionAndDiffAnswersAreMadeOncePerRevision() throws {
        let service = try LiveService(transport: .inProcess)
        let token = service.tokens[.routesPublish]
        #expect(service.call("POST", "/v1/revisions", token: token, headers: rev1, body: publishBody(extraRoute: "off-loop")).status == 201)
        let cache = service.api.context.revisionAnswers
        let first = service.call("GET", "/v1/revisions/1", token: token)
        let again = service.call("GET", "/v1/revisions/1", token: token)
        #expect(first.status == 200 && first.body == again.body && cache.count == 1)
        let diff = service.call("GET", "/v1/revisions/1/diff/2", token: token)
        #expect(diff.status == 200 && service.call("GET", "/v1/revisions/1/diff/2", token: token).body == diff.body && cache.count == 2)
        #expect(service.call("GET", "/v1/revisions/9", token: token).status == 404 && cache.count == 2, "a refusal is not kept")
        let notModified = service.call("GET", "/v1/revisions/1", token: token, headers: [("If-None-Match", "\"rev-1\"")])
        #expect(notModified.status == 304)
    }

    @Test func whileTheQueueIsFullCachedManifestsAreServedAndWorkIs503() throws {
        let service = try LiveService(maximumQueuedWork: 1)
        let read = service.tokens[.manifestRead]
        let cached = "/v1/manifest?platform=ios&version=5.3.0"
        #expect(service.call("GET", cached, token: read).status == 200, "built once, on the work queue")
        let hold = Hold(service.api.context.work, jobs: 1)
        defer { hold.release() }
        // Hold's own retries may have been refused while the build's job was returning.
        let refusedBefore = service.api.context.work.refused.load(ordering: .relaxed)

        let fetch = service.call("GET", cached, token: read)
        #expect(fetch.status == 200, "a cached view is answered on the loop: \(fetch.text.prefix(200))")
        let unbuilt = service.call("GET", "/v1/manifest?platform=ios&version=5.2.0", token: read)
        #expect(unbuilt.status == 503 && unbuilt.errorCode == "busy" && unbuilt["Retry-After"] == "1", "\(unbuilt.text)")
        let validate = service.call("POST", "/v1/validate", token: service.tokens[.routesPublish], body: storefrontRoutesText)
        #expect(validate.status == 503 && validate.errorCode == "busy")
        let publish = service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish], headers: rev1,
                                   body: "{\"routes\": \(storefrontRoutesText)}")
        #expect(publish.status == 503 && publish.errorCode == "busy")
        #expect(service.store.snapshot.revisions.count == 1, "a refused publish changes nothing")
        #expect(service.call("GET", "/healthz").status == 200)
        let metrics = service.call("GET", "/metrics", token: service.tokens[.telemetryRead]).text
        #expect(metrics.contains("waymark_work_refused_total \(refusedBefore + 3)"), "\(metrics.split(separator: "\n").filter { $0.contains("work") })")

        hold.release()
        var reply = unbuilt
        for _ in 0..<1_000 where reply.status == 503 {
            usleep(1_000)
            reply = service.call("GET", "/v1/manifest?platform=ios&version=5.2.0", token: read)
        }
        #expect(reply.status == 200, "answered once the queue is free")
    }
}
