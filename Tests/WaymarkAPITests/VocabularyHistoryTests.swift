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
}
