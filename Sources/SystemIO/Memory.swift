import CSystemShim

/// The process's heap, as the system sees it.
public enum Memory {
    /// Returns the memory malloc keeps free back to the system (glibc's `malloc_trim(0)`).
    /// glibc keeps what a large piece of work freed — a publish's parse, a build view's
    /// resolver — in its arenas, one per thread that allocated, so the RSS after one
    /// 10,000-route publish stayed ~12 MB above what the store holds. A few milliseconds;
    /// for after such work, not for every request.
    @discardableResult
    public static func releaseFree() -> Bool {
        waymark_release_free_memory() != 0
    }
}
