import CSystemShim

/// The process's heap, as the system sees it.
public enum Memory {
    /// Returns the memory malloc keeps free back to the system (glibc's `malloc_trim(0)`).
    /// glibc keeps what a large piece of work freed — a publish's parse, a build view's
    /// resolver — in its arenas, one per thread that allocated, so the RSS after one
    /// 10,000-route publish stayed ~12 MB above what the store holds. A few milliseconds;
    /// for after such work, not for every request.
    /// Caps malloc's arenas at `count` (glibc's `M_ARENA_MAX`; its default is eight per
    /// core). Each arena keeps its own free memory and fragments on its own: with one per
    /// thread that ever allocated, a server with 10,000 routes for 20 builds measured 57–65
    /// MB from run to run; with one per core, 53–56. Call before starting threads.
    public static func limitArenas(_ count: Int) {
        _ = waymark_limit_arenas(Int32(max(1, count)))
    }

    @discardableResult
    public static func releaseFree() -> Bool {
        waymark_release_free_memory() != 0
    }
}
