import Testing
@testable import WaymarkAPI

/// Unknown-link suggestions are kept per shape against the revision and schemas they were
/// made for; a request that read an older snapshot leaves what was made for the newer one.
@Suite("Suggestion cache")
struct SuggestionCacheTests {
    @Test func aLateRequestOnAnOlderSnapshotNeitherClearsNorKeeps() {
        let cache = SuggestionCache()
        let older = SuggestionCache.Stamp(revision: 4, schemas: ["a"])
        let newer = SuggestionCache.Stamp(revision: 5, schemas: ["a"])
        cache.keep(nil, for: "/summer/deals", at: newer, current: newer)
        cache.keep(nil, for: "/winter/deals", at: newer, current: newer)
        #expect(cache.count == 2)
        // Made against revision 4 while 5 was published.
        cache.keep(nil, for: "/spring/deals", at: older, current: newer)
        #expect(cache.count == 2, "the newer revision's suggestions stay")
        #expect(cache.suggestion(for: "/summer/deals", at: newer) != nil)
        #expect(cache.suggestion(for: "/spring/deals", at: older) == nil, "and the older one's is not kept")
        // A schema registered: the same revision, another stamp; what was made before no longer holds.
        let registered = SuggestionCache.Stamp(revision: 5, schemas: ["a", "b"])
        cache.keep(nil, for: "/autumn/deals", at: registered, current: registered)
        #expect(cache.count == 1 && cache.suggestion(for: "/summer/deals", at: registered) == nil)
    }
}
