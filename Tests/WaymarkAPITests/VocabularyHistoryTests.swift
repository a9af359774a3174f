import Foundation
import ManifestStore
import RouteEngine
import Telemetry
import Testing
import TestSupport
@testable import WaymarkAPI

/// Telemetry's vocabulary over history on disk: the revisions served are named at once,
/// older ones within the synchronous budget too, the rest once the background read ends.
@Suite("Vocabulary over history", .serialized)
struct VocabularyHistoryTests {
    func names(_ parser: BatchParser) -> Set<String> {
        Set(parser.vocabulary.routes.names.map { String(decoding: $0, as: UTF8.self) })
    }

    /// Each row: the synchronous budget, whether revision 2's route is named by the first parser.
    static let rows: [(String, Int, Bool)] = [
        ("everything at once", 16 << 20, true),
        ("only the revisions served at once", 0, false),
    ]

    @Test(arguments: rows)
    func oldRouteIDsAreNamedOnceRead(_ label: String, _ budget: Int, _ atOnce: Bool) throws {
        let service = try LiveService(transport: .inProcess)
        for number in 2...6 {
            guard case .published = try service.store.publish(routes: HistoryEndpointTests.routes("c\(number)"), base: number - 1,
                                                              author: "m", message: "", now: Date()) else {
                Issue.record("revision \(number) was not published")
                return
            }
        }
        let cache = VocabularyCache(synchronousBytes: budget)
        let context = service.api.context
        let first = names(cache.parser(for: service.store, documents: context.documents, limits: context.telemetry.options.limits))
        #expect(first.contains("c6") && first.contains("product"), "\(label): the served revision's ids")
        #expect(first.contains("c2") == atOnce, "\(label)")
        let deadline = Date().addingTimeInterval(30)
        while cache.isReadingHistory, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(!cache.isReadingHistory, "\(label): the background read ended")
        let later = names(cache.parser(for: service.store, documents: context.documents, limits: context.telemetry.options.limits))
        #expect(["c2", "c3", "c4", "c5", "c6"].allSatisfy(later.contains), "\(label): \(later.sorted())")
    }

    func publish(_ service: LiveService, _ number: Int) throws -> Bool {
        guard case .published = try service.store.publish(routes: HistoryEndpointTests.routes("c\(number)"), base: number - 1,
                                                          author: "m", message: "", now: Date()) else {
            Issue.record("revision \(number) was not published")
            return false
        }
        return true
    }

    /// History's ids are held newest first up to `maximumRoutes`; the served revision's always.
    @Test func historyIsBoundedNewestFirst() throws {
        let service = try LiveService(transport: .inProcess)
        for number in 2...6 { guard try publish(service, number) else { return } }
        let context = service.api.context
        let served = try context.documents.routeIDs(#require(service.store.snapshot.current))
        var limits = context.telemetry.options.limits
        // Revision 6's ids and one more: revision 5's only new id.
        limits.maximumRoutes = served.count + 1
        let cache = VocabularyCache()
        let first = names(cache.parser(for: service.store, documents: context.documents, limits: limits))
        #expect(first == Set(served + ["c5"]), "\(first.subtracting(served).sorted())")
        #expect(cache.historyRouteCount == limits.maximumRoutes)
        // A new revision's ids rank first: c5 leaves for c6, now history.
        guard try publish(service, 7) else { return }
        cache.refresh(store: service.store, documents: context.documents)
        let later = names(cache.parser(for: service.store, documents: context.documents, limits: limits))
        #expect(later.contains("c7") && later.contains("c6") && !later.contains("c5"), "\(later.sorted())")
        #expect(cache.historyRouteCount == limits.maximumRoutes)
        // No history at all: the served revision's ids still.
        limits.maximumRoutes = 0
        let none = VocabularyCache()
        #expect(names(none.parser(for: service.store, documents: context.documents, limits: limits)) == Set(served.filter { $0 != "c6" } + ["c7"]))
        #expect(none.historyRouteCount == 0)
    }

    /// The service's cache is made again as a change is prepared, before the change returns,
    /// and only when what it names changed: a schedule keeps the parser.
    @Test func aChangeMakesTheParserBeforeItReturnsAndOnlyIfNeeded() throws {
        let service = try LiveService(transport: .inProcess)
        let context = service.api.context
        let cache = context.vocabulary
        let limits = context.telemetry.options.limits
        _ = cache.parser(for: service.store, documents: context.documents, limits: limits)
        let made = cache.parsersMade
        guard case .scheduled(let item) = try service.store.schedule(routes: HistoryEndpointTests.routes("later"), at: Date().addingTimeInterval(3_600),
                                                                     base: 1, author: "m", message: "", now: Date()) else {
            Issue.record("not scheduled")
            return
        }
        _ = try service.store.cancelSchedule(item.id, actor: "m")
        _ = cache.parser(for: service.store, documents: context.documents, limits: limits)
        #expect(cache.parsersMade == made, "a schedule and its cancel named nothing new")
        guard try publish(service, 2) else { return }
        #expect(cache.parsersMade == made + 1)
        #expect(names(cache.parser(for: service.store, documents: context.documents, limits: limits)).contains("c2"), "read as written")
    }

    /// A loop that sees a generation its parser was not checked against keeps the parser and
    /// has it made again in the background (a cache no change prepares).
    @Test func aLoopNeverMakesAParserAfterTheFirst() throws {
        let service = try LiveService(transport: .inProcess)
        let context = service.api.context
        let limits = context.telemetry.options.limits
        let cache = VocabularyCache()
        _ = cache.parser(for: service.store, documents: context.documents, limits: limits)
        guard try publish(service, 2) else { return }
        let stale = names(cache.parser(for: service.store, documents: context.documents, limits: limits))
        #expect(!stale.contains("c2"), "answered with the parser it had")
        let deadline = Date().addingTimeInterval(30)
        while cache.parsersMade < 2, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(names(cache.parser(for: service.store, documents: context.documents, limits: limits)).contains("c2"))
    }
}
